"""The stdio gateway when its client's input ends: like a server read to the end of its
input, ``agentguard mcp-proxy`` answers what was asked first (a judged call included,
which enters the run as a call that ran), finishes the run and exits; it never stays
behind its client, even in front of a server that ignores the end of its own input.

Raw JSON-RPC lines on a pipe (``printf ... | agentguard mcp-proxy``), the way a shell
script or a client that half-closes its pipe talks to it; the server is the SDK's."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agentguard.cli.main import main
from tests.integrations.mcp_servers.harness import (
    HERE,
    OPS,
    Run,
    assert_records_agree,
    assert_trace_is_what_ran,
)

EXIT_WITHIN = 60.0
"""A bound on a hang, not a speed goal: the proxy exits within seconds of its input's end."""


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


HANDSHAKE = [
    _request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "1"},
        },
    ),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
]


def _pipe(run: Run, lines: list[str], *options: str) -> tuple[int, list[dict[str, Any]]]:
    """Run the proxy (with ``options``) with ``lines`` on its stdin, closed after them;
    its exit code and the messages it wrote to stdout."""
    with run.stderr.open("w") as errors:
        done = subprocess.run(
            [sys.executable, *run.proxy_args(*options)],
            input="".join(line + "\n" for line in lines),
            stdout=subprocess.PIPE,
            stderr=errors,
            env=run.env(),
            text=True,
            timeout=EXIT_WITHIN,
            check=False,
        )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line]


def test_input_that_ends_is_answered_then_the_run_finishes_and_the_proxy_exits(
    tmp_path: Path,
) -> None:
    """Before: with its input at end the proxy answered nothing, wrote its finish line and
    then waited forever on the SDK's stdout writer (its stream was never closed)."""
    run = Run(tmp_path, HERE / "ops.ltl", OPS)
    lines = [
        *HANDSHAKE,
        _request(2, "tools/list"),
        _request(3, "tools/call", {"name": "transfer", "arguments": {"amount": 20}}),
        _request(4, "tools/call", {"name": "transfer", "arguments": {"amount": 9000}}),
    ]
    code, answers = _pipe(run, lines)
    assert code == 0, run.stderr.read_text()
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert set(by_id) == {1, 2, 3, 4}
    assert "tools" in by_id[2]["result"]
    assert by_id[3]["result"]["isError"] is False
    assert by_id[4]["result"]["isError"] is True  # refused, never sent
    assert [c["args"] for c in run.reached_server()] == [{"amount": 20.0}]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)  # the log's chain ends with the run's finish line


DEAF_SERVER = """
import sys, time
sys.stdin.close()
while True:
    time.sleep(1)
"""


def test_a_server_that_ignores_the_end_of_its_input_does_not_keep_the_proxy(
    tmp_path: Path,
) -> None:
    """A server that never exits when its input ends (nor ever answers) is stopped by
    the proxy once its client is gone; the proxy exits, and says nothing ran."""
    run = Run(tmp_path, HERE / "ops.ltl", [sys.executable, "-c", DEAF_SERVER])
    code, answers = _pipe(run, [*HANDSHAKE])
    assert code == 0, run.stderr.read_text()
    assert answers == []  # the server answered nothing, and nothing was made up
    assert run.reached_server() == []


def test_a_keyed_anchored_log_verifies_and_its_truncation_does_not(tmp_path: Path) -> None:
    """``--log-key-file`` and ``--log-heads``: the proxy's log verifies with the key and
    the heads; with its last line removed the chain alone still verifies, the heads not."""
    run = Run(tmp_path, HERE / "ops.ltl", OPS)
    key, heads = tmp_path / "log.key", tmp_path / "heads.jsonl"
    key.write_text("a proxy's secret\n")
    call = _request(3, "tools/call", {"name": "transfer", "arguments": {"amount": 9000}})
    code, _ = _pipe(run, [*HANDSHAKE, call], "--log-key-file", str(key), "--log-heads", str(heads))
    assert code == 0, run.stderr.read_text()
    verify = ["audit", "verify", str(run.log), "--key-file", str(key)]
    assert main([*verify, "--require-finish", "--heads", str(heads)]) == 0
    lines = run.log.read_text().splitlines()
    assert all("hmac" in json.loads(line) for line in lines)
    run.log.write_text("".join(line + "\n" for line in lines[:-1]))
    assert main(verify) == 0  # the chain alone cannot see its end removed
    assert main([*verify, "--heads", str(heads)]) == 1


CHARGED_FIRST = """
constraint charged_first severity BLOCK_AND_WARN message "charge before refunding"
  := G(issue_refund -> O paced_charge.ok)
"""


def _charge_then_refund(seconds: float) -> list[str]:
    """A charge that answers after ``seconds``, and a refund whose start waits for it
    (its verdict relies on the charge's result)."""
    charge = {"name": "paced_charge", "arguments": {"order_id": "A1", "seconds": seconds}}
    refund = {"name": "issue_refund", "arguments": {"order_id": "A1", "amount": 5}}
    return [_request(2, "tools/call", charge), _request(3, "tools/call", refund)]


def test_a_call_waiting_for_a_slow_sibling_does_not_hold_the_proxy_past_the_drain(
    tmp_path: Path,
) -> None:
    """Found from outside: the refund's start waited (in a thread the drain's cancel
    could not stop) for a charge the server answers after 25 s; the proxy exited after
    32 s with a traceback, answering neither. Now the run ends when the drain does: the
    charge is settled as cancelled, the waiting refund withdrawn and answered."""
    spec = tmp_path / "s.ltl"
    spec.write_text(CHARGED_FIRST)
    run = Run(tmp_path, spec)
    started = time.monotonic()
    code, answers = _pipe(run, [*HANDSHAKE, *_charge_then_refund(25.0)])
    took = time.monotonic() - started
    assert code == 0, run.stderr.read_text()
    assert took < 25.0  # the 10 s drain and a start (11 s), not the 30 s wait (32 s before)
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert by_id[3]["result"]["isError"] is True  # refused when it was about to start
    assert "Traceback" not in run.stderr.read_text()
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)


def test_a_client_cancelling_a_waiting_call_does_not_stop_the_proxy(tmp_path: Path) -> None:
    """Found from outside: cancelling (notifications/cancelled) a call whose start was
    waiting for its sibling withdrew it twice (once refused at its start, once
    cancelled): FirewallProtocolError tore the proxy down, so any client could stop it.
    Now the proxy answers the sibling and the next request, and the log says what ran."""
    spec = tmp_path / "s.ltl"
    spec.write_text(CHARGED_FIRST.replace("paced_charge.ok", 'paced_charge(result = "never")'))
    run = Run(tmp_path, spec)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    lookup = {"name": "lookup_order", "arguments": {"order_id": "A1"}}
    with run.stderr.open("w") as errors:
        proxy = subprocess.Popen(
            [sys.executable, *run.proxy_args()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=run.env(),
            text=True,
        )
        assert proxy.stdin is not None
        charge, refund = _charge_then_refund(2.0)
        for line, pause in ((HANDSHAKE[0], 0.0), (HANDSHAKE[1], 1.0), (charge, 0.3)):
            proxy.stdin.write(line + "\n")
            proxy.stdin.flush()
            time.sleep(pause)
        for line in (refund, json.dumps(cancel)):
            time.sleep(0.3)
            proxy.stdin.write(line + "\n")
            proxy.stdin.flush()
        time.sleep(3.0)  # the charge answers; the cancelled refund's start is refused
        assert proxy.poll() is None, run.stderr.read_text()
        last = _request(4, "tools/call", lookup) + "\n"  # then its input ends
        out, _ = proxy.communicate(last, timeout=EXIT_WITHIN)
    assert proxy.returncode == 0, run.stderr.read_text()
    by_id = {a["id"]: a for a in map(json.loads, out.splitlines()) if "id" in a}
    assert set(by_id) == {1, 2, 4}  # the cancelled request is not answered
    assert by_id[4]["result"]["isError"] is False
    assert "Traceback" not in run.stderr.read_text()
    assert [c["tool"] for c in run.reached_server()] == ["paced_charge", "lookup_order"]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)


def test_a_request_id_in_flight_cannot_be_used_again(tmp_path: Path) -> None:
    """Found from outside: a second tools/call with the id of one still in flight took
    the first's place: its answer settled the other call, a call that ran vanished from
    the trace, and a lookup of one order licensed the refund of another (a HARD_STOP
    bypassed). A request whose id is in flight is now answered with a JSON-RPC error and
    goes nowhere; the first runs and is recorded as it ran."""
    run = Run(tmp_path)
    charge = {"name": "paced_charge", "arguments": {"order_id": "A1", "seconds": 1.0}}
    lookup = {"name": "lookup_order", "arguments": {"order_id": "B2"}}
    code, answers = _pipe(
        run, [*HANDSHAKE, _request(5, "tools/call", charge), _request(5, "tools/call", lookup)]
    )
    assert code == 0, run.stderr.read_text()
    fives = [a for a in answers if a.get("id") == 5]
    assert len(fives) == 2
    assert any(a.get("error", {}).get("code") == -32600 for a in fives)
    assert any(a.get("result", {}).get("isError") is False for a in fives)
    assert [c["tool"] for c in run.reached_server()] == ["paced_charge"]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert [c["tool_name"] for c in report["trace"]] == ["paced_charge"]


def test_a_request_id_is_used_once_and_a_cancellation_of_nothing_is_ignored(
    tmp_path: Path,
) -> None:
    """Found from outside: an id used again after its first request was answered was
    relayed (the client's own log then paired both requests with the first answer), and
    a cancellation of an id not in flight made the proxy drop the answer of the request
    that later used it (recorded as cancelled, its dependent refund never answered).
    Now an id is used once per session (-32600 after), and a cancellation of nothing is
    ignored."""
    run = Run(tmp_path)
    lookup = {"name": "lookup_order", "arguments": {"order_id": "A1"}}
    refund = {"name": "issue_refund", "arguments": {"order_id": "A1", "amount": 10}}
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    code, answers = _pipe(
        run,
        [
            *HANDSHAKE,
            json.dumps(cancel),  # nothing of id 7 is in flight
            _request(7, "tools/call", lookup),
            _request(8, "tools/call", refund),
            _request(1, "tools/call", lookup),  # id 1 was the handshake's
        ],
    )
    assert code == 0, run.stderr.read_text()
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for answer in answers:
        by_id.setdefault(answer.get("id"), []).append(answer)
    assert json.loads(by_id[7][0]["result"]["content"][0]["text"])["verified"] is True
    assert by_id[8][0]["result"]["isError"] is False
    ones = sorted(by_id[1], key=lambda a: "error" in a)  # the handshake's answer, the refusal
    assert "serverInfo" in ones[0]["result"] and ones[1]["error"]["code"] == -32600
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order", "issue_refund"]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
