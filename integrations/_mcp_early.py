"""The MCP handshake relayed before the proxy's SDK is loaded (``agentguard mcp-proxy``
over stdio, with the server started first: :mod:`._mcp_process`).

Started first, a server is often ready before the proxy: importing the SDK alone takes
longer than a Node server takes to start. So while the proxy loads, this module (the
standard library only) relays the client's ``initialize`` request to the server and the
server's answer back, and then the client's ``notifications/initialized``: each as the
exact bytes of its line, so the client gets the server's own answer, and gets it as soon
as the server gives it. Nothing else is relayed before the proxy is ready, and nothing
the spec judges is ever part of the handshake: a line that is not exactly the message
expected next (not JSON, a key given twice, another method, a batch, a stray ``\\r`` a
reader could split on) ends this relay, and it waits, unread and unrelayed, for the
relay that judges (:mod:`._mcp_relay`), as do whatever the server says first that is not
the answer and every request the client sends after the handshake.

The proxy takes over as soon as it is ready (:meth:`EarlyRelay.handover`), wherever the
handshake is: this relay stops between two messages, and hands over the bytes it read
and did not relay, with the id of the ``initialize`` it relayed and whether its answer
was relayed too (:class:`Handshake`). POSIX only (it waits on pipes with ``select``).
"""

from __future__ import annotations

import io
import json
import os
import select
import sys
import threading
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final

from ._mcp_process import Started

_CHUNK: Final = 65536
INITIALIZE: Final = "initialize"
INITIALIZED: Final = "notifications/initialized"


@dataclass
class Handshake:
    """What the early relay did, for the relay that takes over: the client's and the
    server's bytes it read and did not relay (in order, before anything read later),
    the id of the ``initialize`` it relayed (None: none), whether the server's answer
    to it was relayed, and the protocol version that answer agreed to."""

    client_rest: bytes = b""
    server_rest: bytes = b""
    request_id: int | str | None = None
    answered: bool = False
    protocol: str | None = None


class _Stop(Exception):
    """The proxy is ready, a pipe ended, or a message is not the one expected next."""


class EarlyRelay:
    """The handshake between the client on ``client_in``/``client_out`` (file
    descriptors) and the server ``process``, relayed in a thread from :meth:`start`
    until :meth:`handover`."""

    def __init__(self, process: Started, client_in: int = 0, client_out: int = 1) -> None:
        if process.stdin is None or process.stdout is None:
            raise ValueError("the MCP server's process has no pipes to relay")
        self._client_in, self._client_out = client_in, client_out
        self._server_in, self._server_out = process.stdin.fileno(), process.stdout.fileno()
        self._found = Handshake()
        self._client, self._server = bytearray(), bytearray()
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="agentguard-handshake", daemon=True)

    def start(self) -> EarlyRelay:
        self._thread.start()
        return self

    def handover(self) -> Handshake:
        """Stop relaying (between two messages) and say what was done (again when called
        again: the proxy stops it too if it stops before it serves)."""
        if self._thread.is_alive():
            os.write(self._wake_write, b"x")
            self._thread.join()
        if self._wake_read >= 0:
            for fd in (self._wake_read, self._wake_write):
                os.close(fd)
            self._wake_read = self._wake_write = -1
            self._found.client_rest = bytes(self._client)
            self._found.server_rest = bytes(self._server)
        return self._found

    # the thread ------------------------------------------------------------------
    def _run(self) -> None:
        with suppress(_Stop, OSError):  # OSError: a pipe closed (the relay after says so)
            self._relay()

    def _relay(self) -> None:
        request = _message(self._line(self._client_in, self._client))
        request_id = request.get("id") if request.get("method") == INITIALIZE else None
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            raise _Stop
        self._forward(self._client, self._server_in)
        self._found.request_id = request_id
        answer = _message(self._line(self._server_out, self._server))
        if "method" in answer or not _same_id(answer.get("id"), request_id):
            raise _Stop
        if not ("result" in answer) ^ ("error" in answer):
            raise _Stop
        self._forward(self._server, self._client_out)
        self._found.answered = True
        version = (answer.get("result") or {}).get("protocolVersion")
        self._found.protocol = version if isinstance(version, str) else None
        notification = _message(self._line(self._client_in, self._client))
        if notification.get("method") != INITIALIZED or "id" in notification:
            raise _Stop
        self._forward(self._client, self._server_in)

    def _line(self, fd: int, buffer: bytearray) -> bytes:
        """The next line in ``buffer`` (read from ``fd`` until there is one), still in it."""
        while b"\n" not in buffer:
            ready, _, _ = select.select([fd, self._wake_read], [], [])
            if self._wake_read in ready:
                raise _Stop
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                raise _Stop
            buffer += chunk
        return bytes(buffer[: buffer.index(b"\n") + 1])

    def _forward(self, buffer: bytearray, fd: int) -> None:
        """Write the first line of ``buffer`` to ``fd`` as it is, and drop it from ``buffer``."""
        end = buffer.index(b"\n") + 1
        view = memoryview(bytes(buffer[:end]))
        del buffer[:end]
        while view:
            view = view[os.write(fd, view) :]


def begin(process: Started) -> EarlyRelay | None:
    """The handshake of ``process``'s client on stdin/stdout, relayed from now on; None
    where it cannot be (Windows: ``select`` does not wait on pipes)."""
    if sys.platform == "win32":  # pragma: no cover - the CI runs on Linux
        return None
    return EarlyRelay(process).start()


def client_input(rest: bytes, fd: int = 0) -> io.TextIOWrapper:
    """The client's input for the relay that takes over: ``rest`` (read already), then
    the rest of ``fd``, as UTF-8 text lines (as the SDK reads its stdin)."""
    raw = _Prefixed(rest, fd)
    return io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")


class _Prefixed(io.RawIOBase):
    """``prefix``, then what ``fd`` gives (never closed here: it is the process's stdin)."""

    def __init__(self, prefix: bytes, fd: int) -> None:
        self._prefix, self._fd = prefix, fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        if self._prefix:
            data, self._prefix = self._prefix[: len(target)], self._prefix[len(target) :]
        else:
            data = os.read(self._fd, len(target))
        target[: len(data)] = data
        return len(data)


def _message(line: bytes) -> dict[str, Any]:
    """``line`` as one JSON-RPC 2.0 message object, read strictly (see the module)."""
    if b"\r" in line:
        raise _Stop
    try:
        value = json.loads(line.decode("utf-8"), object_pairs_hook=_unique)
    except ValueError as exc:  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        raise _Stop from exc
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        raise _Stop
    return value


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each given once (readers differ on which of two wins)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key is given twice")
    return found


def _same_id(value: Any, request_id: int | str) -> bool:
    return type(value) is type(request_id) and value == request_id


__all__ = ["INITIALIZE", "INITIALIZED", "EarlyRelay", "Handshake", "begin", "client_input"]
