"""What a firewall keeps stays bounded however the run goes (re-flagged constraints, late
violations), and its saved state is the monitors' state: save() works without the trace,
restores to the same decisions, and does not grow with the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.core import DECISIONS_KEPT
from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall, FirewallStateError
from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.severity import Severity
from tests.enforcement.test_memory_mode import CONSTRAINTS, STEPS, spec_of

FIXTURES = Path(__file__).parent / "fixtures"

REFLAG = parse_spec(
    """spec reflag
tool t()
tool u()
constraint at_most_three severity TOLERATE := CalledN(t, 3, <=)
constraint clean_results severity TOLERATE := G !u(result.ok = false)
"""
)


def step(fw: Firewall, name: str, result: Any = "ok") -> None:
    d = fw.propose(name, {})
    if d.executes:
        fw.record(name, {}, result, call_id=d.call_id)


def test_a_re_flagging_constraint_keeps_the_latest_decisions_only() -> None:
    """Without keep_trace, the flagged decisions kept are the latest DECISIONS_KEPT."""
    fw = Firewall(REFLAG)
    for _ in range(DECISIONS_KEPT + 53):
        step(fw, "t")
    assert len(fw.decisions) == DECISIONS_KEPT
    assert [d.step for d in fw.decisions] == list(range(53, DECISIONS_KEPT + 53))
    assert all(d.violations for d in fw.decisions)
    assert len(fw.finish().decisions) == DECISIONS_KEPT


def test_with_keep_trace_every_decision_is_kept() -> None:
    """keep_trace=True keeps the whole history (the opt-in)."""
    fw = Firewall(REFLAG, keep_trace=True)
    for _ in range(DECISIONS_KEPT + 53):
        step(fw, "t")
    assert len(fw.decisions) == DECISIONS_KEPT + 53


def test_late_violations_kept_are_bounded_too() -> None:
    """A result that breaks a constraint again on every call keeps the latest ones."""
    fw = Firewall(REFLAG)
    for _ in range(DECISIONS_KEPT + 20):
        step(fw, "u", {"ok": False})
    report = fw.finish()
    assert len(report.late_violations) == DECISIONS_KEPT
    assert {v.constraint for v in report.late_violations} == {"clean_results"}


def saved_at(calls: int) -> dict[str, Any]:
    fw = Firewall(REFLAG)
    for i in range(calls):
        step(fw, "t" if i % 2 else "u", {"ok": i % 3 != 0})
    doc: dict[str, Any] = json.loads(json.dumps(fw.save()))
    return doc


def test_a_saved_state_does_not_grow_with_the_run() -> None:
    """Past the decision window, a finite-state spec's state has the same size at 3k and 9k calls."""
    short, long = saved_at(3_000), saved_at(9_000)
    assert "calls" not in long and "excused" not in long
    assert set(long["shadows"]) == {"at_most_three", "clean_results"}
    assert len(long["decisions"]) == len(short["decisions"]) == DECISIONS_KEPT
    for field in ("monitor", "shadows", "soft_counts", "warned", "withdrawn"):
        assert len(json.dumps(long[field])) == len(json.dumps(short[field])), field


def run_with_cut(
    spec: A.Spec, steps: list[tuple[str, bool, bool]], cut: int | None, keep_trace: bool
) -> list[Any]:
    """The decisions and late violations of a run, saved and restored (JSON) at ``cut``."""
    fw = Firewall(spec, run_id="r", keep_trace=keep_trace)
    out: list[Any] = []
    for i, (name, ok, retry) in enumerate(steps):
        if i == cut:
            fw = Firewall.restore(spec, json.loads(json.dumps(fw.save())))
        for _ in range(2 if retry else 1):
            d = fw.propose(name, {})
            out.append((d.action, [v.to_dict() for v in d.violations], d.shadow))
            if d.executes:
                late = fw.record(name, {}, {"ok": ok})
                out.append([v.to_dict() for v in late])
                break
    report = fw.finish()
    out.append((report.compliance.score, dict(report.verdicts), report.stopped))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(CONSTRAINTS, STEPS, st.data(), st.booleans())
def test_a_state_saved_anywhere_restores_to_the_same_decisions(
    constraints: list[tuple[A.Formula, Severity]],
    steps: list[tuple[str, bool, bool]],
    data: st.DataObject,
    keep_trace: bool,
) -> None:
    """save() (with or without the trace) then restore goes on exactly as the run would have."""
    spec = spec_of(constraints)
    cut = data.draw(st.integers(0, len(steps)))
    assert run_with_cut(spec, steps, cut, keep_trace) == run_with_cut(spec, steps, None, True)


def test_a_state_without_calls_restores_without_the_trace() -> None:
    """Restoring a state saved without the trace keeps none; asking for one names why not."""
    fw = Firewall(REFLAG)
    for _ in range(5):
        step(fw, "t")
    doc = fw.save()
    assert not Firewall.restore(REFLAG, doc).finish().trace_kept
    with pytest.raises(FirewallStateError, match="no executed calls"):
        Firewall.restore(REFLAG, doc, keep_trace=True)


REFUND = parse_spec(
    """spec refund
tool lookup_order(order_id: str)
tool issue_refund(order_id: str from results(lookup_order.order_id), amount: number)
constraint looked := G(issue_refund -> O lookup_order)
"""
)


def test_the_values_seen_at_a_from_source_survive_a_state_without_calls() -> None:
    """A `from` check goes on knowing the values the run saw before it was saved."""
    fw = Firewall(REFUND)
    d = fw.propose("lookup_order", {"order_id": "A"})
    fw.record("lookup_order", {"order_id": "A"}, {"order_id": "A", "paid": True}, call_id=d.call_id)
    doc = json.loads(json.dumps(fw.save()))
    assert doc["observed"] == [["A"]]
    restored = Firewall.restore(REFUND, doc)
    assert restored.propose("issue_refund", {"order_id": "A", "amount": 1}).executes
    refused = restored.propose("issue_refund", {"order_id": "B", "amount": 1})
    assert [v.constraint for v in refused.violations] == ["tool:issue_refund:dependency"]


V1_SPEC = """
spec refunds
tool lookup_order(order_id: str)
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str, amount: number)
tool delete_account()
tool search(q: str)
tool cite()
constraint identity_first severity SOFT_BLOCK(2) := G(issue_refund -> O verify_identity)
constraint cap severity BLOCK_AND_WARN := G !issue_refund(amount > 500)
constraint never_delete severity HARD_STOP := G !delete_account
constraint cited severity SOFT_BLOCK(5) := F cite
constraint each_order := forall o: G(issue_refund(order_id = o) -> O lookup_order(order_id = o))
constraint grounded := G(forall x in args(search.q): F cite)
constraint no_empty severity SOFT_BLOCK(3) := G !search(result.count = 0)
"""


def test_a_format_1_state_still_restores_and_goes_on_alike() -> None:
    """A state saved by the previous format (calls, excused positions) continues as the run would."""
    spec = parse_spec(V1_SPEC, source="refunds.ltl")
    doc = json.loads((FIXTURES / "firewall_state_v1.json").read_text())
    assert doc["format"] == "agentguard.firewall/1" and doc["excused"] == {"no_empty": [1, 2]}
    old = Firewall.restore(spec, doc)
    fresh = Firewall(spec, keep_trace=True)
    fresh.propose("issue_refund", {"order_id": "A", "amount": 5})
    d = fresh.propose("lookup_order", {"order_id": "A"})
    fresh.record("lookup_order", {"order_id": "A"}, {"ok": True}, call_id=d.call_id)
    fresh.propose("issue_refund", {"order_id": "A", "amount": 900})
    fresh.record("search", {"q": "x"}, {"count": 0})
    d = fresh.propose("search", {"q": "y"})
    fresh.record("search", {"q": "y"}, {"count": 0}, call_id=d.call_id)
    fresh.record("search", {"q": "z"}, {"count": 1})
    assert old.trace.names == fresh.trace.names
    for fw in (old, fresh):
        assert [v.constraint for v in fw.record("search", {"q": "w"}, {"count": 0})] == ["no_empty"]
        d = fw.propose("delete_account", {})
        assert d.action is Action.STOP
    assert old.finish().verdicts == fresh.finish().verdicts


def test_an_unknown_state_format_is_refused_naming_the_expected_one() -> None:
    """A document of another format says which format a firewall reads."""
    with pytest.raises(FirewallStateError, match=r"agentguard\.firewall/2"):
        Firewall.restore(REFLAG, {"format": "agentguard.firewall/9"})
