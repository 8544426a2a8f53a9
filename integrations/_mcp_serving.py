"""Serving the MCP gateway to clients: over stdio or streamable HTTP, until the client
disconnects or the proxy is stopped (SIGINT / SIGTERM); which client session a request
belongs to; an HTTP ``DELETE`` finishes its firewall session."""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from agentguard.errors import MissingExtraError

try:
    import anyio
    from mcp.server.lowlevel.server import Server
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from .mcp import McpGateway

log = logging.getLogger("agentguard.mcp")

STDIO_SESSION: Final = "stdio"
"""The session key of the one client connected over stdio."""

STATELESS_SESSION: Final = "http-stateless"
"""The session key shared by HTTP requests that carry no ``Mcp-Session-Id``."""

SESSION_HEADER: Final = "mcp-session-id"


def session_key(ctx: Any) -> str:
    """Which client session a request belongs to: the stdio connection, an HTTP
    ``Mcp-Session-Id``, or the shared session of HTTP requests without one."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:
        return STDIO_SESSION
    found = headers.get(SESSION_HEADER)
    return str(found) if found else STATELESS_SESSION


async def serve_stdio(gateway: McpGateway) -> None:
    """Serve one client over stdin/stdout until it disconnects or the proxy is stopped."""
    from mcp.server.stdio import stdio_server

    async with gateway.connected():
        server = gateway.server()
        await _until_stopped(
            lambda: _run_stdio(server, stdio_server),
        )


async def _run_stdio(server: Server[Any], stdio_server: Any) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(gateway: McpGateway, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until the proxy is stopped."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - uvicorn comes with mcp
        raise MissingExtraError("mcp", "uvicorn") from exc

    async with gateway.connected():
        app = _ending_sessions(gateway.server().streamable_http_app(host=host), gateway)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        await _until_stopped(uvicorn.Server(config).serve)


ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


def _ending_sessions(app: ASGIApp, gateway: McpGateway) -> ASGIApp:
    """The app, finishing a firewall session when its client ends it (HTTP ``DELETE``)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        await app(scope, receive, send)
        if scope.get("type") == "http" and scope.get("method") == "DELETE":
            for key, value in scope.get("headers", ()):
                if key.lower() == SESSION_HEADER.encode():
                    gateway.end_session(value.decode("latin-1"))

    return wrapped


async def _until_stopped(main: Callable[[], Awaitable[Any]]) -> None:
    """Run ``main`` until it returns or SIGINT / SIGTERM arrives (then cancel it)."""
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    log.info("agentguard: stopping on signal %d", signum)
                    group.cancel_scope.cancel()
                    return

        group.start_soon(watch)
        await main()
        group.cancel_scope.cancel()


__all__ = ["STATELESS_SESSION", "STDIO_SESSION", "serve_http", "serve_stdio", "session_key"]
