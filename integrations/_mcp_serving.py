"""Serving the MCP gateway to clients over stdio or streamable HTTP, until the client
disconnects or the proxy is stopped (SIGINT / SIGTERM), and which run a request belongs to.

A run has one identity, the MCP session, and ends only when that session really ends:

* **stdio**: the one client on the pipe is one run, finished when stdin ends or the proxy
  stops;
* **HTTP, with a session** (the initialize handshake): the run lives on the SDK's own
  connection of that session and is finished when the connection closes, whatever closed
  it: the client's ``DELETE`` on the endpoint (accepted by the SDK), the SDK's idle
  timeout, the proxy stopping. The SDK closes a connection only after the requests in
  flight on it were settled, so a call that ran is in the run's trace. Nothing else ends
  a run: a request to another path, in another protocol era, or with a session id the
  SDK does not know (it answers 404) never reaches one;
* **HTTP, without a session** (the stateless 2026 protocol: every request stands alone):
  no history can be kept per client, and sharing one would let one client's calls decide
  another's. With ``stateless="refuse"`` (the default) such a ``tools/call`` is refused
  with a message saying to connect with a session, and ``server/discover`` is not offered,
  so a client that can fall back to the handshake (the SDK's default client does) gets a
  session; with ``"per-request"`` each such request is a run of its own, finished with it
  (constraints over several calls then see one call each).
"""

from __future__ import annotations

import logging
import signal
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from agentguard.errors import MissingExtraError

from ._mcp_session import GatewaySession

try:
    import anyio
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.connection import Connection
    from mcp.server.lowlevel.server import NotificationOptions, Server
    from mcp.server.models import InitializationOptions
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from .mcp import McpGateway

log = logging.getLogger("agentguard.mcp")

STDIO_SESSION: Final = "stdio"
"""The run key of the one client connected over stdio."""
REFUSE: Final = "refuse"
PER_REQUEST: Final = "per-request"
STATELESS_POLICIES: Final = (REFUSE, PER_REQUEST)
"""How HTTP requests that belong to no MCP session are served (see the module)."""
_RUN: Final = "agentguard.run"  # where a connection keeps its run (Connection.state)
SESSIONLESS: Final = (
    "this request belongs to no MCP session (the stateless protocol), and the proxy judges "
    "each client's calls together, as one run; connect with a session (the initialize "
    "handshake: an MCP client's 'legacy' mode), or start the proxy with "
    "--stateless per-request to judge each such request alone"
)


def client_run(gateway: McpGateway, ctx: Any) -> GatewaySession | str:
    """The run a request belongs to (started with its session's first call), or why no
    run may judge it."""
    if not gateway.over_http:  # the one client on the pipe (or in the process)
        return gateway.session(STDIO_SESSION)
    connection = _connection(ctx)
    if connection is None:
        return "agentguard cannot tell which MCP session this request belongs to"
    found = connection.state.get(_RUN)
    if isinstance(found, GatewaySession):
        return found
    if connection.session_id is None:
        if gateway.stateless != PER_REQUEST:
            return SESSIONLESS
        key = f"request-{uuid.uuid4().hex}"
    else:
        key = connection.session_id
    run = gateway.open_run(key)
    connection.state[_RUN] = run
    connection.exit_stack.push_async_callback(_end, gateway, key)
    return run


async def _end(gateway: McpGateway, key: str) -> None:
    """The connection closed: its run ends (in a thread: finishing writes files)."""
    await anyio.to_thread.run_sync(gateway.end_session, key)


def listen(gateway: McpGateway, ctx: Any) -> None:
    """The client of ``ctx`` is told when the server's tools change."""
    connection = _connection(ctx)
    if connection is not None:
        gateway.listeners.add(connection)


def connection_of(ctx: Any) -> Connection | None:
    """The connection a request came on (to notify its client), or None."""
    return _connection(ctx)


def _connection(ctx: Any) -> Connection | None:
    """The SDK's connection a request came on (its session's, over HTTP).

    The SDK gives handlers built on ``Context`` its ``connection``; a low-level handler's
    context keeps it on its ``session``. Anything else (an SDK that moved it) is None,
    and the request is refused rather than given a run of its own."""
    found = getattr(getattr(ctx, "session", None), "_connection", None)
    return found if isinstance(found, Connection) else None


class _GatewayServer(Server[Any]):
    """The served side; it says its tool list may change (the gateway relays the
    upstream server's ``notifications/tools/list_changed``)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def gateway_server(name: str, *, sessions_only: bool, **handlers: Any) -> Server[Any]:
    """The low-level server of the gateway; ``sessions_only``: no ``server/discover``, so
    a client that can choose speaks the session protocol."""
    server = _GatewayServer(name, **handlers)
    if sessions_only:
        server.add_request_handler("server/discover", types.RequestParams, _no_discover)
    return server


async def _no_discover(ctx: Any, params: types.RequestParams) -> types.DiscoverResult:
    del ctx, params
    raise MCPError(
        types.METHOD_NOT_FOUND,
        "agentguard mcp-proxy serves MCP sessions over HTTP: use the initialize handshake",
    )


async def serve_stdio(gateway: McpGateway) -> None:
    """Serve one client over stdin/stdout until it disconnects or the proxy is stopped."""
    from mcp.server.stdio import stdio_server

    async with gateway.connected():
        server = gateway.server()
        await _until_stopped(lambda: _run_stdio(server, stdio_server))


async def _run_stdio(server: Server[Any], stdio_server: Any) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(gateway: McpGateway, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until the proxy is stopped."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - uvicorn comes with mcp
        raise MissingExtraError("mcp", "uvicorn") from exc

    gateway.over_http = True
    async with gateway.connected():
        server = gateway.server(sessions_only=gateway.stateless == REFUSE)
        app = server.streamable_http_app(host=host)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=GRACE_SECONDS,
        )
        http = uvicorn.Server(config)

        def stop() -> None:  # a second signal does not wait any more
            http.force_exit, http.should_exit = http.should_exit, True

        await _until_stopped(http.serve, stop)


GRACE_SECONDS: Final = 5
"""On SIGINT / SIGTERM over HTTP, how long requests may go on before they are cancelled;
then the SDK closes every session (its calls in flight settled first), so every run
ends as its session does, with the calls that ran in its trace."""


async def _until_stopped(
    main: Callable[[], Awaitable[Any]], stop: Callable[[], None] | None = None
) -> None:
    """Run ``main`` until it returns; on SIGINT / SIGTERM cancel it, or call ``stop``
    (it makes ``main`` wind down and return: uvicorn's graceful shutdown, which closes
    the sessions through the SDK; cancelling it would leave them open to the end)."""
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    log.info("agentguard: stopping on signal %d", signum)
                    if stop is None:
                        group.cancel_scope.cancel()
                        return
                    stop()

        group.start_soon(watch)
        await main()
        group.cancel_scope.cancel()


__all__ = [
    "PER_REQUEST",
    "REFUSE",
    "SESSIONLESS",
    "STATELESS_POLICIES",
    "STDIO_SESSION",
    "client_run",
    "gateway_server",
    "listen",
    "serve_http",
    "serve_stdio",
]
