"""Serving the MCP gateway to clients over stdio or streamable HTTP, until the client
disconnects or the proxy is stopped (SIGINT / SIGTERM).

Each client session is relayed to a session of its own with the server
(:mod:`._mcp_relay`) and is one run, which ends only when that session really ends:

* **stdio**: the one client on the pipe is one run, finished when stdin ends or the proxy
  stops;
* **HTTP, with a session** (the initialize handshake): one run per ``Mcp-Session-Id``,
  finished when the session ends, whatever ended it: the client's ``DELETE`` on the
  endpoint, the idle timeout, the proxy stopping (:mod:`._mcp_http`). The calls in flight
  then are settled first, so a call that was sent is in the run's trace. Nothing else
  ends a run: a request to another path, in another protocol era, or with a session id
  the proxy does not know (it answers 404) never reaches one;
* **HTTP, without a session** (the stateless 2026 protocol: every request stands alone):
  no history can be kept per client, and sharing one would let one client's calls decide
  another's. With ``stateless="refuse"`` (the default) such a ``tools/call`` is refused
  with a message saying to connect with a session, and ``server/discover`` is not offered,
  so a client that can fall back to the handshake (the SDK's default client does) gets a
  session; with ``"per-request"`` each such request is a run of its own, relayed through
  a session of its own with the server and finished with it (constraints over several
  calls then see one call each).
"""

from __future__ import annotations

import logging
import signal
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from agentguard.errors import MissingExtraError
from agentguard.trace.refusal import refusal_text

from ._mcp_early import EarlyRelay, Handshake, client_input
from ._mcp_http import relay_app
from ._mcp_pipes import client_pipes, servable
from ._mcp_process import Started
from ._mcp_relay import Relay
from ._mcp_upstream import upstream

try:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import NotificationOptions, Server
    from mcp.server.models import InitializationOptions
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
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
SESSIONLESS: Final = (
    "this request belongs to no MCP session (the stateless protocol), and the proxy judges "
    "each client's calls together, as one run; connect with a session (the initialize "
    "handshake: an MCP client's 'legacy' mode), or start the proxy with "
    "--stateless per-request to judge each such request alone"
)


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


async def serve_stdio(
    gateway: McpGateway, started: Started | None = None, early: EarlyRelay | None = None
) -> None:
    """Relay the one client on stdin/stdout until it disconnects or the proxy is stopped.
    ``started``: the server's process, started already (:mod:`._mcp_process`); ``early``:
    the handshake relayed meanwhile (:mod:`._mcp_early`), taken over first."""

    async def relay() -> None:  # the server first: one that cannot start is said at once
        found = Handshake()
        if early is not None:  # (the thread stops between two messages: not for long)
            found = await anyio.to_thread.run_sync(early.handover, abandon_on_cancel=True)
        async with (
            upstream(gateway.target, started, found.server_rest) as server,
            _client_streams(early, found) as streams,
        ):
            session = Relay(gateway, STDIO_SESSION, streams, gateway.target)
            _took_over(session, found)
            try:
                await session.relay(server)
            finally:  # the SDK's stdout writer ends only when its stream is closed: the
                # client left (stdin ended), so nothing more goes to it, and the proxy exits
                await streams[1].aclose()

    async with gateway.connected():
        await _until_stopped(relay)


def _client_streams(early: EarlyRelay | None, found: Handshake) -> Any:
    """The client's messages on stdin and stdout: on the event loop where they are pipes
    or sockets (:mod:`._mcp_pipes`), else through the SDK's stdio server."""
    from mcp.server.stdio import stdio_server

    if servable():
        return client_pipes(found.client_rest)
    stdin = None if early is None else anyio.wrap_file(client_input(found.client_rest))
    return stdio_server(stdin=stdin)


def _took_over(session: Relay, found: Handshake) -> None:
    """The session goes on from the handshake relayed early: its ``initialize`` id is
    used, and awaits the server's answer unless that was relayed already."""
    if found.request_id is None:
        return
    session.used.add(found.request_id)
    session.protocol = found.protocol
    if not found.answered:
        session.requests[found.request_id] = None


async def serve_http(gateway: McpGateway, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until the proxy is stopped."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - uvicorn comes with mcp
        raise MissingExtraError("mcp", "uvicorn") from exc

    async with gateway.connected():
        server = stateless_server(gateway)
        manager = StreamableHTTPSessionManager(server, stateless=True)
        app = relay_app(gateway, manager.handle_request, host, manager.run)
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


def stateless_server(gateway: McpGateway) -> Server[Any]:
    """The server of the requests that belong to no session (see the module): each is
    relayed through a client session of its own, opened and closed with the request."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        del ctx
        async with gateway.client(f"request-{uuid.uuid4().hex}") as client:
            cursor = params.cursor if params is not None else None  # not the 2026 envelope
            return await client.list_tools(params=types.PaginatedRequestParams(cursor=cursor))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        del ctx
        if gateway.stateless != PER_REQUEST:
            text = refusal_text(f"agentguard did not run {params.name}: {SESSIONLESS}")
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )
        async with gateway.client(f"request-{uuid.uuid4().hex}") as client:
            call = types.CallToolRequestParams(name=params.name, arguments=params.arguments)
            request = types.CallToolRequest(params=call)  # not the 2026 envelope
            return await client.send_request(request, types.CallToolResult)

    return gateway_server(
        "agentguard-mcp-proxy",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        sessions_only=gateway.stateless != PER_REQUEST,
    )


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
    "gateway_server",
    "serve_http",
    "serve_stdio",
    "stateless_server",
]
