"""The gateway's streamable HTTP endpoint: each MCP session (the initialize handshake; its
``Mcp-Session-Id``) is relayed to a session of its own with the server, and its run ends
when the session does.

The SDK's session manager serves a ``Server`` object; the gateway relays messages instead
(:mod:`._mcp_relay`), so this endpoint keeps the sessions itself, as the SDK's manager
does, on the SDK's own per-session transport (``StreamableHTTPServerTransport``, which
speaks the wire: SSE streams, ``DELETE``, the idle timeout, DNS-rebinding protection): a
request without a session id opens one (only ``initialize`` succeeds there); one with a
known id goes to its session; an unknown (ended, guessed) id is answered 404 and reaches
no run. A session ends when its transport does (the client's ``DELETE``, the idle
timeout, the proxy stopping); the relay then finishes its run.

A request of the stateless protocol (an ``MCP-Protocol-Version`` of the 2026 era) belongs
to no session: it is served by ``stateless`` (see :mod:`._mcp_serving`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from agentguard.errors import MissingExtraError

from ._mcp_relay import Relay

try:
    import anyio
    import anyio.abc
    from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from .mcp import McpGateway

log = logging.getLogger("agentguard.mcp")

IDLE_SECONDS: Final = 30 * 60
"""A session with no request in flight for this long is closed (the SDK's default)."""
_VERSION_HEADER: Final = b"mcp-protocol-version"

Stateless = Callable[[Scope, Receive, Send], Awaitable[None]]


class RelayEndpoint:
    """The ASGI endpoint at ``/mcp`` (see the module)."""

    def __init__(self, gateway: McpGateway, stateless: Stateless, host: str) -> None:
        self.gateway, self.stateless = gateway, stateless
        self.security = _security(host)
        self.sessions: dict[str, StreamableHTTPServerTransport] = {}
        self.relays: dict[str, Relay] = {}
        self.tasks: anyio.abc.TaskGroup | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k == _VERSION_HEADER), None
        )
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.stateless(scope, receive, send)
            return
        found = dict(scope["headers"]).get(MCP_SESSION_ID_HEADER.lower().encode("latin-1"))
        if found is not None:
            key = found.decode("latin-1")
            transport = self.sessions.get(key)
            if transport is None:
                await JSONResponse(_error("Session not found"), status_code=404)(
                    scope, receive, send
                )
                return
            relay = self.relays.get(key)
            if scope["method"] == "GET" and relay is not None and relay.stream_open is not None:
                relay.stream_open.set()  # the client opens the session's own stream
            await transport.handle_request(scope, receive, send)
            return
        await self._open(scope, receive, send)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session: a new session, relayed from its first message;
        kept only if the request was answered (``initialize`` accepted)."""
        key = uuid.uuid4().hex
        transport = StreamableHTTPServerTransport(
            mcp_session_id=key, security_settings=self.security, idle_timeout=IDLE_SECONDS
        )
        self.sessions[key] = transport
        if self.tasks is None:
            raise RuntimeError("the HTTP endpoint serves only inside its app's lifespan")
        await self.tasks.start(self._relay, key, transport)
        status: list[int] = []

        async def noted(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await transport.handle_request(scope, receive, noted)
        finally:
            if not status or status[0] >= 400:
                await self._discard(key, transport)

    async def _relay(
        self,
        key: str,
        transport: StreamableHTTPServerTransport,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        async with transport.connect() as streams:
            task_status.started()
            relay = Relay(
                self.gateway, key, streams, self.gateway.target, over_http=True, remember=False
            )
            self.relays[key] = relay
            try:
                with transport.idle_scope or anyio.CancelScope():
                    await relay.serve()
            except Exception:
                log.exception("agentguard: session %s failed", key)
            finally:
                await self._discard(key, transport)

    async def _discard(self, key: str, transport: StreamableHTTPServerTransport) -> None:
        self.sessions.pop(key, None)
        self.relays.pop(key, None)
        if not transport.is_terminated:
            with anyio.CancelScope(shield=True):
                await transport.terminate()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            self.tasks = tasks
            try:
                yield
            finally:
                for key, transport in list(self.sessions.items()):
                    await self._discard(key, transport)  # each relay finishes its run
                self.tasks = None


def relay_app(gateway: McpGateway, stateless: Stateless, host: str, lifespan: Any) -> Starlette:
    """The Starlette app serving ``/mcp``; ``lifespan`` is entered around it (the
    stateless requests' server's)."""
    endpoint = RelayEndpoint(gateway, stateless, host)

    @asynccontextmanager
    async def both(app: Starlette) -> AsyncIterator[None]:
        del app
        async with lifespan(), endpoint.running():
            yield

    route = Route("/mcp", endpoint=endpoint, methods=["GET", "POST", "DELETE"])
    return Starlette(routes=[route], lifespan=both)


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on a local address, as the SDK's own app sets it."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _error(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


__all__ = ["IDLE_SECONDS", "RelayEndpoint", "relay_app"]
