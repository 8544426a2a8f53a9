"""JSON-RPC messages over a pair of pipes, one a line each way, read and written on the
event loop: the gateway's side of a server process it started, and its own stdin/stdout.

The SDK's stdio server reads its stdin and writes its stdout through worker threads
(``anyio.wrap_file``): three thread hand-offs for each message relayed, about a third of
the gateway's cost per call. Pipes and sockets can be waited on by the loop instead
(``connect_read_pipe`` / ``connect_write_pipe``), so both sides of the gateway are:
the server's pipes (:func:`line_pipes`, as the SDK's stdio client reads them), and the
client's when stdin and stdout are pipes or sockets, as an MCP client starts a server
(:func:`client_pipes`); anything else (a terminal, a file) is left to the SDK.

What the server writes reaches the client as the very line it wrote (``keep_lines``):
results, notifications and its requests byte for byte, not as pydantic writes them
again (number forms, spacing). What the client sends the server is always written from
what was read and judged, never as its raw text: a reader that takes the first of two
equal keys where pydantic takes the last would act on a request nobody judged.

The client's pipes are served on descriptors of their own, and stdin and stdout point
at the null device and at stderr meanwhile (as the SDK does it), so nothing else in the
process reads the client's messages or writes into its stream; both are restored after.
"""

from __future__ import annotations

import asyncio
import os
import stat
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import IO, Any, Final

from agentguard.errors import MissingExtraError

try:
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

_CHUNK: Final = 65536
_FLUSH_SECONDS: Final = 0.5  # for the messages accepted to be written before the end
_PIPE_ENDED: Final = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)
Streams = tuple[Any, Any]
"""The read stream (a :class:`SessionMessage` or, for a line that is not a message, an
exception) and the write stream (:class:`SessionMessage`), as the SDK's transports give."""


@asynccontextmanager
async def line_pipes(
    source: IO[bytes],
    sink: IO[bytes],
    pending: bytes = b"",
    *,
    replace_invalid: bool = False,
    ending: Callable[[], Awaitable[None]] | None = None,
    keep_lines: bool = False,
) -> AsyncIterator[Streams]:
    """The messages read from ``source`` (``pending`` first: read from it already) and
    written to ``sink``, both owned from now on (closed at the end). ``replace_invalid``:
    bytes that are not UTF-8 are read as U+FFFD (as the SDK reads its stdin), not as a
    line in error. ``keep_lines``: each message read keeps the line it was read from,
    which a sink writes as it is when the message is passed on (:func:`passed_as_read`).
    When the block ends, what was accepted is written (for up to half a second),
    ``sink`` is closed, then ``ending`` runs, then ``source`` is closed."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    reader.feed_data(pending)
    read_pipe, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), source
    )
    write_pipe, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
    writer = asyncio.StreamWriter(write_pipe, protocol, None, loop)
    incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    written = anyio.Event()

    async def from_source() -> None:
        async with incoming:
            buffer = b""
            while chunk := await reader.read(_CHUNK):
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        await incoming.send(_message(line, replace_invalid, keep_lines))
                    except _PIPE_ENDED:  # the session is gone: what still comes is read
                        # and dropped, so the writer never blocks on a full pipe
                        while await reader.read(_CHUNK):
                            pass
                        return
            if buffer.strip():  # a last line without its newline
                with suppress(*_PIPE_ENDED):
                    await incoming.send(_message(buffer, replace_invalid, keep_lines))

    async def to_sink() -> None:
        try:
            async with outgoing:
                async for item in outgoing:
                    line = _line_of(item.message)
                    if line is None:
                        text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                        line = text.encode("utf-8")
                    writer.write(line + b"\n")
                    await writer.drain()
        except _PIPE_ENDED:  # the other side may still run: the session must see the end
            await incoming.aclose()
        finally:
            written.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(from_source)
        tasks.start_soon(to_sink)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(_FLUSH_SECONDS):
                    await written.wait()
                with suppress(OSError):
                    writer.close()
                if ending is not None:
                    await ending()
                read_pipe.close()
            tasks.cancel_scope.cancel()


_LINES: dict[int, tuple[weakref.ref[Any], bytes]] = {}
"""The line each message read with ``keep_lines`` came from, by the message's id while
it lives (pydantic models cannot be weak keys: they are not hashable)."""


def _line_of(message: Any) -> bytes | None:
    found = _LINES.get(id(message))
    return found[1] if found is not None and found[0]() is message else None


def _keep_line(message: Any, line: bytes) -> None:
    key = id(message)
    _LINES[key] = (weakref.ref(message, lambda _: _LINES.pop(key, None)), line)


def passed_as_read(message: Any) -> bool:
    """Will ``message`` be written as the very line it was read from?"""
    return _line_of(message) is not None


def _message(line: bytes, replace_invalid: bool, keep: bool) -> SessionMessage | Exception:
    text: bytes | str = line.decode("utf-8", "replace") if replace_invalid else line
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError as exc:
        return exc
    if keep:
        _keep_line(message, line.rstrip(b"\r"))
    return SessionMessage(message)


def _pipe_like(fd: int) -> os.stat_result | None:
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return found if stat.S_ISFIFO(found.st_mode) or stat.S_ISSOCK(found.st_mode) else None


def servable(stdin: int = 0, stdout: int = 1, stderr: int = 2) -> bool:
    """Whether the client's pipes can be served on the loop: stdin and stdout are pipes
    or sockets, and stdout is not also stderr (made non-blocking, a full pipe would make
    the process's own diagnostics fail rather than wait)."""
    into, out = _pipe_like(stdin), _pipe_like(stdout)
    if into is None or out is None:
        return False
    with suppress(OSError):
        err = os.fstat(stderr)
        if (err.st_dev, err.st_ino) == (out.st_dev, out.st_ino):
            return False
    return True


@asynccontextmanager
async def client_pipes(pending: bytes = b"") -> AsyncIterator[Streams]:
    """The client's messages on stdin (``pending`` first: read from it already) and
    stdout, served on the loop (see the module; only where :func:`servable`)."""
    saved_in, saved_out = os.dup(0), os.dup(1)
    source = os.fdopen(os.dup(0), "rb", buffering=0)
    sink = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        async with line_pipes(source, sink, pending, replace_invalid=True) as streams:
            yield streams
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (null, saved_in, saved_out):
            os.close(fd)


__all__ = ["Streams", "client_pipes", "line_pipes", "passed_as_read", "servable"]
