"""The error judge's bound on kept calls, and states saved before the judge existed.

A judge keeps calls only while nothing has raised and only up to ``KEPT_CALLS``; past it
with no raise it goes blind (the nodes' answer), and a run that raised before the bound
keeps its calls and stays exact up to ``JUDGED_CALLS`` (monitor/judge.py).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agentguard.errors import AgentGuardError
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor import judge as judge_module
from agentguard.monitor.judge import ErrorJudge
from agentguard.trace.model import Call
from tests.monitor.test_predicate_errors import (
    _check,
    _registry,
    call_of,
    formulas,
    offline,
    spec_of,
)

S, V, P = Verdict.SATISFIED, Verdict.VIOLATED, Verdict.PENDING


def judge_of(m: Monitor) -> ErrorJudge:
    judge = m._judge
    assert judge is not None
    return judge


def test_a_run_past_the_bound_with_no_raise_keeps_no_calls() -> None:
    """KEPT_CALLS calls of a spec whose predicates never raise: the judge holds no call
    afterwards (blind), and the verdicts are still verify_trace's."""
    reg = _registry()
    formula = "forall x: G(add(a=x) -> fine(1))"
    m = Monitor(spec_of(formula, reg), registry=reg)
    calls = [call_of("add", i % 7) for i in range(judge_module.KEPT_CALLS - 1)]
    for call in calls:
        m.step(call)
    assert len(judge_of(m).calls) == judge_module.KEPT_CALLS - 1
    calls.append(call_of("other"))
    m.step(calls[-1])
    assert judge_of(m).blind and judge_of(m).calls == []
    assert judge_of(m).active == [] and judge_of(m).held == {}
    for _ in range(50):
        m.step(call_of("add", 3))
    assert judge_of(m).calls == []
    assert m.finish() == {"b": S}
    assert offline(formula, calls, reg) == (True, None)


def test_a_raise_before_the_bound_keeps_the_calls_and_stays_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A value that raises at the first call (bound 3): the judge keeps every call of the
    long run after it and each step equals verify_trace."""
    monkeypatch.setattr(judge_module, "KEPT_CALLS", 3)
    reg = _registry()
    formula = "F other | (forall x: G(add(a=x) -> bad(x)))"
    m = Monitor(spec_of(formula, reg), registry=reg)
    calls = [call_of("add", 2)] + [call_of("other" if i % 3 else "add", 1) for i in range(20)]
    for i, call in enumerate(calls):
        m.step(call)
        passed, error = offline(formula, calls[: i + 1], reg)
        assert ("b" in m.errors()) == (error is not None)
        assert m.peek(call_of("add", 1), ending=True).final["b"] in (None, passed and not error)
    assert not judge_of(m).blind and len(judge_of(m).calls) == len(calls)
    m = Monitor.restore(spec_of(formula, reg), m.save(), registry=reg)
    assert not judge_of(m).blind and len(judge_of(m).calls) == len(calls)
    assert m.finish() == {"b": V} and "bad value" in m.errors()["b"]


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    formulas(),
    st.lists(st.tuples(st.sampled_from(["add", "other"]), st.sampled_from([1, 2])), max_size=7),
    st.integers(0, 7),
)
def test_a_run_that_raised_before_the_bound_equals_verify_trace(
    monkeypatch: pytest.MonkeyPatch, formula: str, names: list[tuple[str, int]], save_at: int
) -> None:
    """Bound 2: a run whose trace makes the evaluator raise on a prefix of at most 2
    calls is judged past the bound exactly as verify_trace, saved and restored."""
    monkeypatch.setattr(judge_module, "KEPT_CALLS", 2)
    reg = _registry()
    calls = [call_of(n, a) for n, a in names]
    try:
        early = any(offline(formula, calls[:k], reg)[1] for k in range(min(2, len(calls)) + 1))
    except AgentGuardError:  # a shape the language refuses: _check skips it too
        return
    event("raised before the bound" if early else "no early raise")
    if early:
        _check(formula, calls, save_at)


def test_a_raise_only_after_the_bound_gets_the_nodes_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bound 3, nothing raised before it: a later raising value the nodes no longer ask
    (`F other` decided the constraint) leaves it SATISFIED with no error, where
    verify_trace reports the error: the one documented approximation."""
    monkeypatch.setattr(judge_module, "KEPT_CALLS", 3)
    reg = _registry()
    formula = "F other | (forall x: G(add(a=x) -> bad(x)))"
    m = Monitor(spec_of(formula, reg), registry=reg)
    calls = [call_of("other"), call_of("add", 1), call_of("add", 1), call_of("add", 2)]
    for call in calls:
        m.step(call)
    assert judge_of(m).blind
    assert m.verdicts["b"] is S and m.errors() == {}
    assert m.finish() == {"b": S}
    passed, error = offline(formula, calls, reg)
    assert not passed and error is not None and "bad value" in error


def test_a_raise_after_the_bound_that_the_nodes_see_is_violated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Blind, a raising value the node does ask makes the constraint violated with the
    error (as offline here)."""
    monkeypatch.setattr(judge_module, "KEPT_CALLS", 2)
    reg = _registry()
    m = Monitor(spec_of("forall x: G(add(a=x) -> bad(x))", reg), registry=reg)
    for call in [call_of("add", 1), call_of("other"), call_of("add", 2)]:
        m.step(call)
    assert judge_of(m).blind
    assert m.verdicts["b"] is V and "bad value" in m.errors()["b"]


# Saved by the main branch's code before the judge existed (no "judge" section), for
# `F other | (forall x: G(add(a=x) -> bad(x)))` after other, add(a=1), and for
# `G(add -> boom(1))` before any call (its node raised at the start).
OLD_DECIDED = json.loads(
    '{"format": "agentguard.monitor/1", "spec": "a9d3d4519e2016c5", "position": 2,'
    ' "constraints": {"b": {"children": [{"state": {"cubes": [[]], "regs": [], "nodes": {}},'
    ' "error": null}, {"fresh": {"cubes": [[6]], "regs": [], "nodes": {"1": ["F"],'
    ' "3": ["L", 1, false], "4": ["L", 2, true], "5": ["O", [3, 4]], "6": ["R", 1, 5]}},'
    ' "groups": [], "error": null, "calls": [], "degraded": false}]}}}'
)
OLD_START_ERROR = json.loads(
    '{"format": "agentguard.monitor/1", "spec": "3cd0cad2a3754459", "position": 0,'
    ' "constraints": {"b": {"state": {"cubes": [[6]], "regs": [], "nodes": {"1": ["F"],'
    ' "3": ["L", 1, false], "4": ["L", 2, true], "5": ["O", [3, 4]], "6": ["R", 1, 5]}},'
    ' "error": "predicate \'boom\' raised ZeroDivisionError: boom", "error_at_start": true}}}'
)


def test_a_state_saved_before_the_judge_restores_blind() -> None:
    """A pre-judge state with calls behind it restores (no "malformed monitor state")
    with a blind judge, and goes on with the nodes' answer."""
    reg = _registry()
    m = Monitor.restore(
        spec_of("F other | (forall x: G(add(a=x) -> bad(x)))", reg), OLD_DECIDED, registry=reg
    )
    assert judge_of(m).blind and judge_of(m).calls == []
    assert m.position == 2 and m.verdicts["b"] is S
    m.step(call_of("add", 1))
    assert m.finish() == {"b": S} and m.errors() == {}
    again = Monitor.restore(
        spec_of("F other | (forall x: G(add(a=x) -> bad(x)))", reg), m.save(), registry=reg
    )
    assert judge_of(again).blind


def test_a_state_saved_before_the_judge_with_no_call_is_exact() -> None:
    """A pre-judge state at position 0 (an error at the start) restores with its kept
    calls known (none): judged exactly as verify_trace, on the empty trace and after."""
    formula = "G(add -> boom(1))"
    for calls in ([], [call_of("other")], [call_of("add")]):
        reg = _registry()
        m = Monitor.restore(spec_of(formula, reg), OLD_START_ERROR, registry=reg)
        assert not judge_of(m).blind and m.verdicts["b"] is P
        for call in calls:
            m.step(call)
        passed, error = offline(formula, calls, reg)
        assert m.finish() == {"b": S if passed else V}
        assert ("b" in m.errors()) == (error is not None)


def test_a_call_position_is_its_place_in_the_kept_calls() -> None:
    """Calls stepped with any position are judged at their place in the run."""
    reg = _registry()
    formula = "forall x: G(add(a=x) -> bad(x))"
    m = Monitor(spec_of(formula, reg), registry=reg)
    calls = [Call("add", {"a": 2}, "ok", 7), Call("other", {}, "ok", 0)]
    for call in calls:
        m.step(call)
    assert m.finish() == {"b": V} and "bad value" in m.errors()["b"]


def test_a_run_that_raised_goes_blind_at_its_own_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A raise at the first call, JUDGED_CALLS 5: the judge keeps 4 calls, then drops them
    (each call then costs what it costs without a judge: no run slows with its length), a
    decided verdict stays decided, and finish gives the nodes' answer: violated, the error
    kept."""
    monkeypatch.setattr(judge_module, "JUDGED_CALLS", 5)
    reg = _registry()
    formula = "forall x: G(add(a=x) -> bad(x))"
    m = Monitor(spec_of(formula, reg), registry=reg)
    m.step(call_of("add", 2))  # bad(2) raises
    assert judge_of(m).raised
    before = m.verdicts["b"]
    for k in range(3):
        m.step(call_of("add", 3 + k))
    assert not judge_of(m).blind and len(judge_of(m).calls) == 4
    m.step(call_of("other"))
    assert judge_of(m).blind and judge_of(m).calls == []
    if before is not P:
        assert m.verdicts["b"] is before
    for k in range(20):
        m.step(call_of("add", 10 + k))
    assert judge_of(m).calls == []
    assert m.finish() == {"b": V} and "b" in m.errors()


def test_kept_calls_restore_with_their_error_and_kind() -> None:
    """A kept call saved and restored keeps its error flag and kind (a spec testing `.ok`
    judges the restored run as it judged the live one)."""
    from agentguard.monitor.state_sets import call_doc, call_from_doc

    failed = Call("lookup", {"a": 1}, "boom", 3, True)
    assert call_from_doc(call_doc(failed), 3) == failed
    said = Call.message("user", "hi")
    assert call_from_doc(call_doc(said), 0) == said
    with pytest.raises(ValueError, match="kind"):
        call_from_doc({"tool_name": "x", "kind": "robot"}, 0)
    with pytest.raises(ValueError, match="kept call 1"):
        call_from_doc({"tool_name": "lookup", "kind": "user"}, 1)
