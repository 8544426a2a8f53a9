"""Whether a request the MCP gateway forwards reached the server, and whether the server
is still there: the streams between the gateway's client session and the server.

A ``tools/call`` the transport never took (the session had seen the server's end), or
took but could not write (the server's input was closed), never reached the server, so
the call did not run (:class:`Delivery`). One the transport took may have been read
before the server died, so it may have run. The end of the server's output (its process
exited) is seen by the stream the session reads, as it happens, before any later call
is sent: :class:`WatchedRead` and :class:`WatchedWrite` report it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Final

from agentguard.errors import MissingExtraError

try:
    import anyio
    import mcp_types as types
    from mcp import ClientSession
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

_CLOSED: Final = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


class Delivery:
    """What became of one forwarded ``tools/call`` request: marked by the watched stream as
    it goes (so not a frozen record): ``handed``, the transport took it; ``failed``, the
    transport could not write it (the server's input was closed)."""

    __slots__ = ("failed", "handed")

    def __init__(self) -> None:
        self.handed = False
        self.failed = False

    @property
    def may_have_reached(self) -> bool:
        """Whether the server may have read the request (so the call may have run)."""
        return self.handed and not self.failed


_DELIVERY: ContextVar[Delivery | None] = ContextVar("agentguard_mcp_delivery", default=None)


async def call(
    session: ClientSession, name: str, args: dict[str, Any], delivery: Delivery
) -> types.CallToolResult:
    """Forward one ``tools/call`` as given; ``delivery`` says whether it reached the server.

    Sent as a plain request: the result comes back as the server gave it (the SDK's
    ``call_tool`` would validate it against the tool's output schema, which is the
    client's business, not the gateway's)."""
    token = _DELIVERY.set(delivery)
    try:
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name=name, arguments=args)
        )
        return await session.send_request(request, types.CallToolResult)
    finally:
        _DELIVERY.reset(token)


class WatchedRead:
    """The stream the client session reads the server from; its end calls ``ended``."""

    def __init__(self, inner: Any, ended: Callable[[str], None]) -> None:
        self.inner, self.ended = inner, ended

    @property
    def last_context(self) -> Any:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self.inner.receive()
        except _CLOSED:
            self.ended("the MCP server's output ended (its process exited)")
            raise

    def __aiter__(self) -> WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> WatchedRead:
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self.inner.__aexit__(kind, exc, tb)
        return result


class WatchedWrite:
    """The stream the client session writes to the server; marks each forwarded call's
    :class:`Delivery`, and calls ``ended`` when the server's input is closed."""

    def __init__(self, inner: Any, ended: Callable[[str], None]) -> None:
        self.inner, self.ended = inner, ended

    async def send(self, item: Any) -> None:
        delivery = _DELIVERY.get()  # set while a forwarded call is being sent
        if getattr(getattr(item, "message", None), "method", None) != "tools/call":
            delivery = None  # another message of the session (a cancellation, a listing)
        if delivery is not None:
            delivery.handed = True
        try:
            await self.inner.send(item)
        except _CLOSED:
            if delivery is not None:
                delivery.failed = True
            self.ended("the MCP server's input is closed (its process exited)")
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> WatchedWrite:
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self.inner.__aexit__(kind, exc, tb)
        return result


__all__ = ["Delivery", "WatchedRead", "WatchedWrite", "call"]
