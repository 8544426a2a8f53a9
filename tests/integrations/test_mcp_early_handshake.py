"""While ``agentguard mcp-proxy`` loads, the MCP handshake is relayed verbatim
(``integrations/_mcp_early.py``): the client's ``initialize`` and the server's answer, as
their exact bytes, then ``notifications/initialized``; nothing else reaches the server
before the firewall is ready, and what was read is handed over, in order, to the relay
that judges."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agentguard.integrations._mcp_early import EarlyRelay, client_input

pytest.importorskip("mcp")

HERE = Path(__file__).parent / "mcp_servers"
INITIALIZE = b'{"jsonrpc": "2.0", "id": 1,  "method": "initialize", "params": {"x": 1}}\n'
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
CALL = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wipe_database"}}\n'
ANSWER = b'{"id":1,"jsonrpc":"2.0","result":{"protocolVersion":"2025-06-18" }}\n'
# a server that writes each line it reads to argv[1], and answers the first with ANSWER
RECORDER = (
    "import sys\n"
    "out = open(sys.argv[1], 'ab', buffering=0)\n"
    "for n, line in enumerate(sys.stdin.buffer):\n"
    "    out.write(line)\n"
    f"    if n == 0: sys.stdout.buffer.write({ANSWER!r}); sys.stdout.flush()\n"
)


class Pipes:
    """A recording server and the client's two pipes, around an :class:`EarlyRelay`."""

    def __init__(self, tmp_path: Path) -> None:
        self.seen = tmp_path / "seen"
        self.seen.write_bytes(b"")
        self.server = subprocess.Popen(
            [sys.executable, "-c", RECORDER, str(self.seen)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        (self.client_in, self.to_proxy), (self.from_proxy, self.client_out) = os.pipe(), os.pipe()
        self.relay = EarlyRelay(self.server, self.client_in, self.client_out).start()

    def send(self, data: bytes) -> None:
        os.write(self.to_proxy, data)

    def received(self) -> bytes:
        return os.read(self.from_proxy, 65536)

    def close(self) -> None:
        self.relay.handover()
        assert self.server.stdin is not None and self.server.stdout is not None
        self.server.stdin.close()
        self.server.wait(10)
        self.server.stdout.close()
        for fd in (self.client_in, self.to_proxy, self.from_proxy, self.client_out):
            os.close(fd)


@pytest.fixture
def pipes(tmp_path: Path) -> Any:
    found = Pipes(tmp_path)
    yield found
    found.close()


def _settle(pipes: Pipes, lines: int) -> None:
    """Wait until the server has recorded ``lines`` lines."""
    deadline = time.monotonic() + 10
    while pipes.seen.read_bytes().count(b"\n") < lines and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_handshake_passes_byte_for_byte_and_nothing_after_it(pipes: Pipes) -> None:
    """initialize and initialized reach the server as sent, the answer the client as
    written; a tools/call sent with them stays with the proxy, handed over unread."""
    pipes.send(INITIALIZE)
    assert pipes.received() == ANSWER
    pipes.send(INITIALIZED + CALL)
    _settle(pipes, 2)
    found = pipes.relay.handover()
    assert pipes.seen.read_bytes() == INITIALIZE + INITIALIZED
    assert (found.request_id, found.answered, found.protocol) == (1, True, "2025-06-18")
    assert found.client_rest == CALL and found.server_rest == b""


@pytest.mark.parametrize(
    "first",
    [
        CALL,
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"initialize"}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\r{"jsonrpc":"2.0","id":2}\n',
        b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]\n',
        b'{"jsonrpc":"2.0","id":true,"method":"initialize"}\n',
    ],
    ids=["a call", "a key twice", "a carriage return", "a batch", "an id of true"],
)
def test_anything_but_a_plain_initialize_first_is_not_relayed(pipes: Pipes, first: bytes) -> None:
    """The first message must be exactly an initialize request; anything else waits for
    the relay that judges, and the server sees nothing."""
    pipes.send(first + INITIALIZED)
    time.sleep(0.2)  # (read by then, or not yet: either way it must not be relayed)
    found = pipes.relay.handover()
    os.set_blocking(pipes.client_in, False)
    with contextlib.suppress(BlockingIOError):
        found.client_rest += os.read(pipes.client_in, 65536)  # what was not read yet
    assert pipes.seen.read_bytes() == b""
    assert found.request_id is None
    assert found.client_rest == first + INITIALIZED


def test_a_handover_before_the_answer_leaves_it_to_the_relay(tmp_path: Path) -> None:
    """Taken over while the server has not answered: the request is marked unanswered."""
    pipes = Pipes(tmp_path)
    try:
        pipes.send(b'{"jsonrpc":"2.0","id":"a","method":"initialize"}\n')
        _settle(pipes, 1)
        found = pipes.relay.handover()
        assert (found.request_id, found.answered) == ("a", False)
        assert found.server_rest in (b"", ANSWER)  # read already, or still in the pipe
    finally:
        pipes.close()


def test_the_client_input_goes_on_after_what_was_read(tmp_path: Path) -> None:
    """The relay that takes over reads the bytes read already first, then the pipe."""
    read, write = os.pipe()
    os.write(write, b'{"b": 2}\n')
    os.close(write)
    with client_input(b'{"a": 1}\n{"a', read) as lines:
        assert list(lines) == ['{"a": 1}\n', '{"a{"b": 2}\n']
    os.close(read)


def test_the_proxy_judges_what_the_client_sent_with_the_handshake(tmp_path: Path) -> None:
    """Sent in one write with the handshake, before the proxy is loaded: the refused call
    never reaches the server and the allowed one runs; the initialize answer is the
    server's own bytes (the same as the server gives directly)."""
    record = tmp_path / "ran.jsonl"
    env = {**os.environ, "SHOP_RECORD": str(record)}
    server = [sys.executable, str(HERE / "shop.py")]
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    requests = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode()
        + b"\n",
        INITIALIZED,
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":'
        b'{"name":"issue_refund","arguments":{"order_id":"A1","amount":5}}}\n',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":'
        b'{"name":"lookup_order","arguments":{"order_id":"A1"}}}\n',
    ]
    proxied = [sys.executable, "-m", "agentguard", "mcp-proxy", str(HERE / "shop.ltl"), "--"]
    answers = {}
    for how, command in (("direct", server), ("proxy", [*proxied, *server])):
        record.write_text("")
        out = subprocess.run(
            command, input=b"".join(requests), capture_output=True, env=env, timeout=60
        ).stdout
        answers[how] = {json.loads(line)["id"]: line for line in out.splitlines()}
    assert sorted(answers["proxy"]) == [1, 2, 3]  # (the server alone may exit at once)
    proxy = {i: json.loads(line) for i, line in answers["proxy"].items()}
    assert answers["proxy"][1] == answers["direct"][1]
    assert proxy[2]["result"]["isError"] is True
    assert "lookup_order" in proxy[2]["result"]["content"][0]["text"]
    assert proxy[3]["result"]["structuredContent"]["verified"] is True
    ran = [json.loads(line)["tool"] for line in record.read_text().splitlines()]
    assert ran == ["lookup_order"]
