"""The MCP server behind the gateway, while it serves: its client session, the tools it
lists, and whether it is alive.

The gateway judges each call with its tool's ``inputSchema`` (defaults, types:
:mod:`agentguard.trace.mcp_arguments`), so it must know the tools as the server lists
them *now*, a tool added mid-session included. :class:`ToolCatalog` takes every listing
the gateway sees: its own at the start; again after the server's
``notifications/tools/list_changed`` (then the clients are told in turn) or before a call
to a name it does not know (a server may add a tool without saying so); and each page a
client lists through it (forwarded as the server gives it, so the schemas judged are
those the client saw). A name listed twice with different schemas is ambiguous (which
one the server runs is not known): calls to it are refused, and so are calls to a tool
the server no longer lists.
"""

from __future__ import annotations

import logging
import sys
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Final

from agentguard.errors import AgentGuardError, MissingExtraError

from ._mcp_streams import WatchedRead, WatchedWrite

try:
    import anyio
    import anyio.abc
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.server.connection import Connection
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

log = logging.getLogger("agentguard.mcp")

LIST_PAGES: Final = 100  # a server whose listing never ends cannot hang the gateway
_LISTING_FAILED: Final = (MCPError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)


class GatewayError(AgentGuardError, RuntimeError):
    """The upstream MCP server could not be started or listed."""


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


async def list_all(session: ClientSession) -> list[types.Tool]:
    """Every page of the server's ``tools/list`` (up to :data:`LIST_PAGES`)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


class Upstream:
    """The server the gateway started (see the module). ``learned`` receives the tools
    new or changed in each listing (the gateway declares them to its open runs);
    ``listeners`` are the client connections told when the tools change."""

    def __init__(self, learned: Callable[[Sequence[types.Tool]], None]) -> None:
        self.catalog = ToolCatalog()
        self.learned = learned
        self.session: ClientSession | None = None
        self.init: types.InitializeResult | None = None
        self.down: str | None = None  # why the server is gone, once it is
        self.listeners: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._tasks: anyio.abc.TaskGroup | None = None
        self._listing: anyio.Lock | None = None
        self._wanted = False  # a listing is asked for and has not begun

    @asynccontextmanager
    async def running(self, params: StdioServerParameters) -> AsyncIterator[ClientSession]:
        """Start the server, initialize, list its tools; serve until the block ends."""
        async with AsyncExitStack() as stack:
            try:
                read, write = await stack.enter_async_context(stdio_client(params, sys.stderr))
                streams = WatchedRead(read, self.ended), WatchedWrite(write, self.ended)
                session = await stack.enter_async_context(
                    ClientSession(*streams, message_handler=self._from_server)
                )
                self.init = await session.initialize()
                self.catalog.replace(await list_all(session))
            except (OSError, MCPError) as exc:
                command = " ".join([params.command, *params.args])
                raise GatewayError(f"cannot start the MCP server {command!r}: {exc}") from exc
            self._listing = anyio.Lock()
            self._tasks = await stack.enter_async_context(anyio.create_task_group())
            self.session = session
            try:
                yield session
            finally:
                self.session = None
                self._tasks.cancel_scope.cancel()

    def ended(self, why: str) -> None:
        """The server is gone (its output ended, its input closed): later calls are refused."""
        if self.down is None and self.session is not None:
            self.down = why
            log.error("agentguard: %s; every later call is refused", why)

    def unavailable(self) -> str | None:
        """Why no call can be forwarded now, or None."""
        if self.session is None or self.down is not None:
            return f"the MCP server is not running ({self.down or 'not started'})"
        return None

    async def _from_server(self, message: Any) -> None:
        """A message from the server: when its tools changed, list them again (one
        listing waits at a time: a flood of notifications is one listing)."""
        if not isinstance(message, types.ToolListChangedNotification):
            return
        if self._tasks is not None and not self._wanted:
            self._wanted = True
            self._tasks.start_soon(self.refresh)

    async def refresh(self) -> None:
        """List the tools again; new or changed ones go to ``learned``; the clients are
        told when the list changed."""
        session, lock = self.session, self._listing
        if session is None or lock is None or self.down is not None:
            return
        async with lock:
            self._wanted = False  # a notification from now on asks for another listing
            before = {t.name for t in self.catalog.tools}
            try:
                listed = await list_all(session)
            except _LISTING_FAILED as exc:
                log.warning("agentguard: listing the server's tools again failed: %s", exc)
                return
            changed = self.catalog.replace(listed)
            try:
                self.learned(changed)
            except Exception:
                log.exception("agentguard: declaring the server's new tools failed")
        if changed or before != {t.name for t in self.catalog.tools}:
            for client in list(self.listeners):
                await client.send_tool_list_changed()  # best-effort: never raises

    async def tool(self, name: str) -> types.Tool | None:
        """The listing of ``name``; a name not known is listed again first."""
        found = self.catalog.get(name)
        if found is None and self.catalog.problem(name) is not None and self.down is None:
            await self.refresh()
            found = self.catalog.get(name)
        return found

    async def page(self, cursor: str | None) -> types.ListToolsResult:
        """One page of the server's listing, for a client (learned from too)."""
        if self.session is None or self.down is not None:
            raise MCPError(types.INTERNAL_ERROR, f"agentguard: {self.unavailable()}")
        ask = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await self.session.list_tools(params=ask)  # the client's own _meta stays out
        whole = cursor is None and page.next_cursor is None
        self.learned(self.catalog.replace(page.tools) if whole else self.catalog.merge(page.tools))
        return page


__all__ = ["LIST_PAGES", "GatewayError", "ToolCatalog", "Upstream", "list_all"]
