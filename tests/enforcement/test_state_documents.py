"""Saved firewall states: every malformed or tampered field is a FirewallStateError, and a
state saved with a key is authenticated (an edited one is refused)."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.firewall import Firewall, FirewallStateError
from agentguard.errors import AgentGuardError
from agentguard.language import parse_formula, parse_spec
from agentguard.language.ast import Spec
from agentguard.monitor import FormulaMonitor, MonitorStateError
from agentguard.trace.model import Call

SPEC_TEXT = """
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

KEY = b"a secret of the deployment"


def spec() -> Spec:
    return parse_spec(SPEC_TEXT, source="refunds.ltl")


def saved(*, key: bytes | None = None, keep_trace: bool = True) -> dict[str, Any]:
    """A real state with calls, decisions, counts, a late violation and a call in flight
    (without ``keep_trace``: no calls, the counters and the ``from`` values instead)."""
    fw = Firewall(spec(), keep_trace=keep_trace)
    fw.propose("issue_refund", {"order_id": "A", "amount": 5})  # soft block: counted
    d = fw.propose("lookup_order", {"order_id": "A"})
    fw.record("lookup_order", {"order_id": "A"}, {"ok": True}, call_id=d.call_id)
    fw.propose("issue_refund", {"order_id": "A", "amount": 900})  # block and warn
    fw.record("search", {"q": "x"}, {"count": 0})  # a late violation, excused after
    fw.propose("cite", {})  # left in flight
    doc: dict[str, Any] = json.loads(json.dumps(fw.save(key=key)))
    return doc


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON document (objects by key, lists by index)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(paths(v, (*prefix, i)))
    return out


DOC = saved()
PATHS = paths(DOC)
LEAN = saved(keep_trace=False)
LEAN_PATHS = paths(LEAN)
HOSTILE = st.one_of(
    st.sampled_from(["", "x", "stopped", "999", "-1", "inf", "nan"]),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -1, 10**30, 0.5, True, False, None]),
    st.integers(-(10**6), 10**6),
    st.just([]),
    st.just({}),
    st.just([[1, 2], {"a": None}]),
    st.just({"T": 1, "0": ["Q"]}),
    st.just([["L", 99999, True]]),
)


def mutate(doc: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool) -> None:
    parent: Any = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if delete and isinstance(parent, dict):
        del parent[last]
    elif delete and isinstance(parent, list):
        parent.pop(last)
    else:
        parent[last] = value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), HOSTILE, st.booleans())
def test_any_tampered_field_is_a_state_error_or_a_working_firewall(
    path: tuple[Any, ...], value: Any, delete: bool
) -> None:
    """A mutated field is refused with FirewallStateError, or the firewall restored works."""
    restored_or_refused(DOC, path, value, delete)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(LEAN_PATHS), HOSTILE, st.booleans())
def test_any_tampered_field_of_a_state_without_calls_is_refused_or_works(
    path: tuple[Any, ...], value: Any, delete: bool
) -> None:
    """The same for a state saved without the trace (counters, shadows, `from` values)."""
    restored_or_refused(LEAN, path, value, delete)


def restored_or_refused(
    saved_doc: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool
) -> None:
    doc = copy.deepcopy(saved_doc)
    mutate(doc, path, value, delete)
    try:
        fw = Firewall.restore(spec(), doc)
    except FirewallStateError:
        return
    for name, args in [("verify_identity", {"customer_id": "c"}), ("cite", {})]:
        try:
            d = fw.propose(name, args)
            if d.executes:
                fw.record(name, args, "ok", call_id=d.call_id)
        except AgentGuardError:
            pass  # a protocol error on a state that says the run is elsewhere is fine
    fw.finish()


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PATHS), HOSTILE, st.booleans())
def test_with_a_key_any_edit_is_refused(path: tuple[Any, ...], value: Any, delete: bool) -> None:
    """An authenticated state that was edited anywhere does not restore."""
    doc = saved(key=KEY)
    before = json.dumps(doc, sort_keys=True)
    mutate(doc, path, value, delete)
    if json.dumps(doc, sort_keys=True, default=str) == before:
        return  # the mutation changed nothing
    with pytest.raises(FirewallStateError):
        Firewall.restore(spec(), doc, key=KEY)


def test_a_stopped_run_cannot_be_un_stopped() -> None:
    """The attack the MAC is for: flipping `stopped` back to false."""
    fw = Firewall(spec(), keep_trace=True)
    fw.propose("delete_account", {})
    assert fw.stopped
    doc = json.loads(json.dumps(fw.save(key=KEY)))
    assert Firewall.restore(spec(), doc, key=KEY).stopped
    doc["stopped"] = False
    with pytest.raises(FirewallStateError, match="modified"):
        Firewall.restore(spec(), doc, key=KEY)
    with pytest.raises(FirewallStateError, match="not authenticated"):
        Firewall.restore(spec(), Firewall(spec(), keep_trace=True).save(), key=KEY)
    with pytest.raises(FirewallStateError, match="modified"):
        Firewall.restore(spec(), fw.save(key=b"another key"), key=KEY)


def test_the_crashes_of_the_issue_are_state_errors() -> None:
    """A string soft_counts value and an infinite sendbacks count are refused by name."""
    doc = saved()
    doc["soft_counts"] = {"identity_first": "many"}
    with pytest.raises(FirewallStateError, match="soft_counts"):
        Firewall.restore(spec(), doc)
    doc = saved()
    doc["sendbacks"] = math.inf
    with pytest.raises(FirewallStateError, match="sendbacks"):
        Firewall.restore(spec(), doc)


def test_an_authenticated_state_restores_and_goes_on() -> None:
    """The key does not change what a restored run does."""
    doc = saved(key=KEY)
    fw = Firewall.restore(spec(), doc, key=KEY)
    assert fw.trace.names == ("lookup_order", "search")
    assert doc["late"] and doc["shadows"] and doc["inflight"] and doc["soft_counts"]
    assert fw.propose("delete_account", {}).action.value == "stop"


def test_a_monitor_state_can_be_authenticated() -> None:
    """Monitor.save(key=...) / restore(..., key=...) refuse an edited machine state."""
    f = parse_formula("G(issue_refund -> O verify_identity)")
    m = FormulaMonitor(f)
    m.step(Call("verify_identity"))
    doc = json.loads(json.dumps(m.save(key=KEY)))
    assert FormulaMonitor.restore(f, doc, key=KEY).verdict is m.verdict
    doc["position"] = 0
    with pytest.raises(MonitorStateError, match="modified"):
        FormulaMonitor.restore(f, doc, key=KEY)


def test_a_call_recorded_without_a_proposal_saves_and_restores() -> None:
    """``record`` of a call nothing proposed (a call that ran elsewhere, recorded after
    the fact) is a step of the run: a state saved after it restores (the restore checks
    that the step count is at least the calls'), the run goes on with identical
    verdicts, and every later decision's id is new."""
    fw = Firewall(spec(), keep_trace=True)
    fw.record("lookup_order", {"order_id": "A1"}, {"ok": True})
    first = fw.propose("verify_identity", {"customer_id": "C1"})
    fw.complete(first, {"verified": True})
    fw.record("search", {"q": "policy"}, {"count": 2})
    restored = Firewall.restore(spec(), fw.save())
    assert restored.trace.names == ("lookup_order", "verify_identity", "search")
    for live in (fw, restored):
        refund = live.propose("issue_refund", {"order_id": "A1", "amount": 10})
        assert refund.action.value == "allow"
        assert refund.call_id != first.call_id
        assert live.propose("delete_account", {}).action.value == "stop"
