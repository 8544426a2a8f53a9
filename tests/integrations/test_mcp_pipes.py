"""The gateway's pipes on the event loop (integrations/_mcp_pipes.py): messages a line
each, a line that is not one an exception, a last line without its newline read, and the
client's stdin/stdout served so only where both are pipes or sockets."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types
from agentguard.integrations._mcp_pipes import line_pipes, passed_as_read, servable
from mcp.shared.message import SessionMessage

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def test_messages_are_read_a_line_each_and_written_a_line_each() -> None:
    into_read, into_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(into_write, PING[:10])

    async def scenario() -> list[Any]:
        source, sink = os.fdopen(into_read, "rb", 0), os.fdopen(out_write, "wb", 0)
        async with line_pipes(source, sink, b"", replace_invalid=True) as (read, write):
            os.write(into_write, PING[10:] + b"\n\nnot json\n\xff\n" + PING)
            os.close(into_write)
            got = [item async for item in read]
            answer = types.JSONRPCResponse(jsonrpc="2.0", id=1, result={})
            await write.send(SessionMessage(answer))
        return got

    got = anyio.run(scenario)
    assert isinstance(got[0], SessionMessage) and got[0].message.method == "ping"
    assert isinstance(got[1], Exception) and isinstance(got[2], Exception)  # blank line skipped
    assert isinstance(got[3], SessionMessage)  # the last line, with no newline after it
    assert len(got) == 4
    assert os.read(out_read, 4096) == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    os.close(out_read)


def test_only_pipes_and_sockets_are_served_on_the_loop(tmp_path: Path) -> None:
    read, write = os.pipe()
    left, right = socket.socketpair()
    with open(tmp_path / "f", "wb") as file:
        assert servable(read, write, file.fileno())
        assert servable(left.fileno(), right.fileno(), file.fileno())
        assert not servable(file.fileno(), write, 2)  # a file is not waited on
        assert not servable(read, write, write)  # stderr is stdout: left to the SDK
    for fd in (read, write):
        os.close(fd)
    left.close()
    right.close()


def test_a_line_kept_is_written_again_as_it_was_read() -> None:
    """A message read with ``keep_lines`` (the server's) is written as its very line
    (spacing, key order and number forms as the server wrote them); one made anew is
    written by pydantic."""
    server_read, server_write = os.pipe()  # the server's output
    client_read, client_write = os.pipe()  # the client's input
    unused_read, unused_write = os.pipe()
    idle_read, idle_write = os.pipe()
    original = b'{"jsonrpc": "2.0",  "id": 7, "result": {"b": 1e21, "a": 1.50}}'
    os.write(server_write, original + b"\n")
    os.close(server_write)

    async def scenario() -> None:
        server = os.fdopen(server_read, "rb", 0)
        async with line_pipes(server, os.fdopen(unused_write, "wb", 0), keep_lines=True) as (
            read,
            _,
        ):
            (item,) = [m async for m in read]
        assert passed_as_read(item.message)
        idle = os.fdopen(idle_read, "rb", 0)
        async with line_pipes(idle, os.fdopen(client_write, "wb", 0)) as (_, write):
            await write.send(item)
            fresh = types.JSONRPCResponse(jsonrpc="2.0", id=8, result={"a": 1})
            await write.send(SessionMessage(fresh))

    anyio.run(scenario)
    written = os.read(client_read, 4096)
    assert written == original + b"\n" + b'{"jsonrpc":"2.0","id":8,"result":{"a":1}}\n'
    for fd in (client_read, unused_read, idle_write):
        os.close(fd)
