"""agentguard.testing.capture: decisions and log events in users' own tests."""

from __future__ import annotations

from agentguard.enforcement.firewall import Firewall
from agentguard.language import parse_spec
from agentguard.testing.capture import capture_firewall

SPEC = parse_spec(
    """
spec s
tool search(q: str)
tool delete_account()
constraint no_delete severity HARD_STOP := G !delete_account
constraint no_empty severity TOLERATE := G !search(result.count = 0)
"""
)


def test_capture_collects_decisions_and_events_without_a_log_file() -> None:
    """Inside the block every decision and log event is collected, even with no log configured."""
    with capture_firewall() as cap:
        fw = Firewall(SPEC, run_id="t1", keep_trace=True)
        fw.propose("search", {"q": "x"})
        fw.record("search", {"q": "x"}, {"count": 0})
        fw.propose("delete_account", {})
    assert cap.actions() == [("allow", "search"), ("stop", "delete_account")]
    assert [d.tool for d in cap.stops()] == ["delete_account"]
    assert cap.violated("no_delete") and cap.violated("no_empty")
    assert [e["event"] for e in cap.events] == [
        "agentguard.decision",
        "agentguard.result",
        "agentguard.late_violation",
        "agentguard.decision",
    ]
    assert {e["run_id"] for e in cap.events} == {"t1"}
    assert len(cap.of_event("agentguard.late_violation")) == 1


def test_capture_stops_collecting_after_the_block() -> None:
    """Decisions made after the block are not collected."""
    with capture_firewall() as cap:
        pass
    Firewall(SPEC, keep_trace=True).propose("search", {"q": "x"})
    assert cap.decisions == [] and cap.events == []
