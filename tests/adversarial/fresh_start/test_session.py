"""A call that arrives after its run ended is refused by that run's firewall and logged,
never judged by a fresh one that has forgotten the run's counts and stops."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentguard as ag
from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action
from agentguard.enforcement.flight import FirewallProtocolError
from agentguard.guard import GuardSession

SPEC = """
constraint one_refund severity HARD_STOP := CalledN(refund, 1, <=)
"""


def _records(log: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_call_after_the_run_finished_is_refused_and_logged(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    session = GuardSession(ag.parse_spec(SPEC), log_path=log)
    session.start_run()
    d = session.propose("refund", {"order": "A"})
    session.complete(session.start(d), "ok")
    session.finish_run()
    late = session.propose("refund", {"order": "B"})
    assert late.action is Action.BLOCK and "already ended" in late.message
    assert not late.executes
    records = _records(log)
    assert records[-1]["event"] == "agentguard.decision" and records[-1]["action"] == "block"
    assert verify_lines(log.read_text().splitlines(), require_finish=True).ok


def test_a_stopped_run_is_not_replaced_by_a_fresh_firewall(tmp_path: Path) -> None:
    """After a STOP ends the run, the next call is refused (it used to start a new
    firewall, and a second refund ran under 'at most one')."""
    session = GuardSession(ag.parse_spec(SPEC))
    session.start_run()
    for order in ("A", "B"):
        d = session.propose("refund", {"order": order})
        if d.executes:
            session.complete(session.start(d), "ok")
    assert session.stop is not None
    session.finish_run()
    again = session.propose("refund", {"order": "C"})
    assert not again.executes


def test_a_firewall_refuses_after_finish_and_while_finishing() -> None:
    fw = ag.Firewall(ag.parse_spec(SPEC))
    fw.finish()
    assert fw.propose("refund", {"order": "A"}).action is Action.BLOCK
    assert all(not d.executes for d in fw.propose_batch([("refund", {}), ("refund", {})]))
    with pytest.raises(FirewallProtocolError):
        fw.record("refund", {"order": "A"}, "ok")
    with pytest.raises(FirewallProtocolError):
        fw.observe("user", "hello")


def test_an_explicit_boundary_starts_a_fresh_run() -> None:
    """``finish_run(next_run=True)`` marks a run boundary: the next call starts anew."""
    session = GuardSession(ag.parse_spec(SPEC))
    d = session.propose("refund", {"order": "A"})
    session.complete(session.start(d), "ok")
    session.finish_run(next_run=True)
    assert session.propose("refund", {"order": "B"}).executes
