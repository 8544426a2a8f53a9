"""The MCP server behind the gateway: how to reach it (a command started over stdio, or
a remote server over streamable HTTP or SSE: :class:`UpstreamTarget`), and the tools it
lists (:class:`ToolCatalog`).

Each client session gets a session of its own with the server (:func:`connect`): a
server process of its own over stdio, an MCP session of its own over HTTP, because
roots, subscriptions and log levels belong to one client.

The gateway judges each call with its tool's ``inputSchema`` (defaults, types:
:mod:`agentguard.trace.mcp_arguments`), so it must know the tools as the server lists
them *now*, a tool added mid-session included. :class:`ToolCatalog` takes every listing
the gateway sees: its own before the first judged call; again after the server's
``notifications/tools/list_changed`` (before the client is told in turn) or before a call
to a name it does not know (a server may add a tool without saying so); and each page the
client lists through it (forwarded as the server gives it, so the schemas judged are
those the client saw). A name listed twice with different schemas is ambiguous (which
one the server runs is not known): calls to it are refused, and so are calls to a tool
the server no longer lists.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agentguard.errors import AgentGuardError, MissingExtraError

from . import _mcp_process
from ._mcp_pipes import line_pipes
from ._mcp_process import Started

try:
    import anyio
    import anyio.to_thread
    import mcp_types as types
    from mcp import StdioServerParameters, stdio_client
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

LIST_PAGES: Final = 100  # a server whose listing never ends cannot hang the gateway
STDIO: Final = "stdio"
HTTP: Final = "http"
SSE: Final = "sse"
TRANSPORTS: Final = (STDIO, HTTP, SSE)
"""How the gateway reaches the server: a command it starts (stdio), or a URL."""


class GatewayError(AgentGuardError, RuntimeError):
    """The upstream MCP server could not be started or reached, or the gateway was given
    options that cannot serve."""


@dataclass(frozen=True)
class UpstreamTarget:
    """The server behind the gateway: ``command`` started over stdio (with ``env`` and
    ``cwd``), or the server at ``url`` over ``transport`` (``"http"``: streamable HTTP,
    ``"sse"``: the older HTTP+SSE transport)."""

    command: tuple[str, ...] = ()
    url: str | None = None
    transport: str = STDIO
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise GatewayError(
                f"the server's transport must be one of {', '.join(TRANSPORTS)}, "
                f"not {self.transport!r}"
            )
        if self.transport == STDIO and not self.command:
            raise GatewayError("no MCP server command given (agentguard mcp-proxy SPEC -- COMMAND)")
        if self.transport != STDIO and not self.url:
            raise GatewayError(f"no URL given for the MCP server over {self.transport}")

    def describe(self) -> str:
        return (
            " ".join(self.command) if self.transport == STDIO else f"{self.url} ({self.transport})"
        )


@asynccontextmanager
async def upstream(
    target: UpstreamTarget, started: Started | None = None, pending: bytes = b""
) -> AsyncIterator[tuple[Any, Any]]:
    """As :func:`connect`; a server that cannot be started is a :class:`GatewayError`
    naming it."""
    try:
        async with connect(target, started, pending) as streams:
            yield streams
    except OSError as exc:
        raise GatewayError(f"cannot start the MCP server {target.describe()!r}: {exc}") from exc


@asynccontextmanager
async def connect(
    target: UpstreamTarget, started: Started | None = None, pending: bytes = b""
) -> AsyncIterator[tuple[Any, Any]]:
    """A session of its own with the server: the read and write streams of its messages
    (the server process ends, or the HTTP session is deleted, when the block ends).
    ``started``: the server's process, started already (:mod:`._mcp_process`), and
    ``pending`` what was read from it already (:mod:`._mcp_early`)."""
    if started is not None:
        async with adopted(started, pending) as streams:
            yield streams
    elif target.transport == STDIO:
        params = StdioServerParameters(
            command=target.command[0],
            args=list(target.command[1:]),
            env=None if target.env is None else dict(target.env),
            cwd=target.cwd,
        )
        async with stdio_client(params, sys.stderr) as streams:
            yield streams
    elif target.transport == HTTP:
        async with streamable_http_client(str(target.url)) as streams:
            yield streams
    else:
        async with sse_client(str(target.url)) as streams:
            yield streams


@asynccontextmanager
async def adopted(process: Started, pending: bytes = b"") -> AsyncIterator[tuple[Any, Any]]:
    """The streams of a server process started already (``pending``: the start of its
    output, read from it already), as the SDK's ``stdio_client`` gives those of one it
    starts: one JSON-RPC message a line each way (a line that is not one comes as an
    exception), the read stream ending when the server's stdout does; when the block
    ends, what was accepted is flushed, the server's stdin closed and the process
    stopped (:func:`._mcp_process.stop`). Read and written on the event loop
    (:mod:`._mcp_pipes`)."""
    if process.stdin is None or process.stdout is None:
        raise GatewayError("the MCP server's process has no pipes to relay")

    async def stop() -> None:
        await anyio.to_thread.run_sync(lambda: _mcp_process.stop(process, pipes=False))

    pipes = line_pipes(process.stdout, process.stdin, pending, ending=stop, keep_lines=True)
    async with pipes as streams:
        yield streams


class ToolCatalog:
    """The server's tools by name, as the gateway last learned them (see the module)."""

    def __init__(self) -> None:
        self._tools: dict[str, types.Tool] = {}
        self._ambiguous: set[str] = set()

    def get(self, name: str) -> types.Tool | None:
        return self._tools.get(name)

    @property
    def tools(self) -> tuple[types.Tool, ...]:
        return tuple(self._tools.values())

    def problem(self, name: str) -> str | None:
        """Why a call to ``name`` cannot be judged by its schema, or None."""
        if name in self._ambiguous:
            return (
                f"the server lists {name!r} more than once with different input schemas, "
                "so which one it runs is not known"
            )
        if name not in self._tools:
            return f"the server does not list a tool {name!r} (any more)"
        return None

    def replace(self, listed: Sequence[types.Tool]) -> list[types.Tool]:
        """A whole listing: it replaces what was known. Returns the tools new or changed."""
        return self._take(listed, whole=True)

    def merge(self, page: Sequence[types.Tool]) -> list[types.Tool]:
        """One page a client listed: its tools are updated, the others kept."""
        return self._take(page, whole=False)

    def _take(self, listed: Sequence[types.Tool], *, whole: bool) -> list[types.Tool]:
        seen: dict[str, types.Tool] = {}
        ambiguous: set[str] = set()
        for tool in listed:
            first = seen.setdefault(tool.name, tool)
            if first is not tool and first.input_schema != tool.input_schema:
                ambiguous.add(tool.name)
        changed = [t for n, t in seen.items() if _schema(self._tools.get(n)) != _schema(t)]
        if whole:
            self._tools, self._ambiguous = seen, ambiguous
        else:
            self._tools.update(seen)
            self._ambiguous = (self._ambiguous - seen.keys()) | ambiguous
        return changed


def _schema(tool: types.Tool | None) -> Any:
    return None if tool is None else tool.input_schema


__all__ = [
    "HTTP",
    "LIST_PAGES",
    "SSE",
    "STDIO",
    "TRANSPORTS",
    "GatewayError",
    "ToolCatalog",
    "UpstreamTarget",
    "adopted",
    "connect",
    "upstream",
]
