"""A count too large to unroll is one integer: verdicts as the unrolled automaton's, O(1) state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.language import parse_formula, parse_spec
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.counting import OPS, CountNode
from agentguard.scoring.verify import verify_trace
from agentguard.trace.model import Call, Trace

COUNT_OPS = ("=", ">=", "<=", ">", "<")


@settings(deadline=None)
@given(
    op=st.sampled_from(sorted(OPS)),
    limit=st.integers(0, 4),
    names=st.lists(st.sampled_from("ab"), max_size=9),
)
def test_counter_verdicts_equal_the_unrolled_automaton(
    op: str, limit: int, names: list[str]
) -> None:
    """On every prefix, the counter's verdict and final truth are the compiled machine's."""
    text = (
        f"!CalledN(a, {limit}, {'=' if op == '!=' else op})"
        if op == "!="
        else f"CalledN(a, {limit}, {op})"
    )
    machine = Monitor.for_formula(parse_formula(text))
    counter = CountNode("a", limit, op)
    assert counter.verdict() is machine.verdict
    for name in names:
        call = Call(name)
        assert counter.peek([call], True, []) == machine.monitor.node("formula").peek(
            [call], True, []
        )
        counter.step(call)
        machine.step(call)
        assert counter.verdict() is machine.verdict
        assert counter.final() == machine.monitor.peek_end()["formula"]
    assert str(counter.classify()) == str(machine.classification())


@pytest.mark.parametrize("op", COUNT_OPS)
@pytest.mark.parametrize("negated", [False, True])
def test_a_large_count_is_a_counter_equal_to_offline(op: str, negated: bool) -> None:
    """CalledN above the unrolling limit monitors as a counter and finishes as offline."""
    formula = f"{'!' if negated else ''}CalledN(a, 70, {op})"
    spec = parse_spec(f"spec s\nconstraint c := {formula}")
    monitor = Monitor(spec)
    assert isinstance(monitor.node("c"), CountNode)
    calls = [Call("a" if i % 3 else "b", {}, "ok") for i in range(110)]
    for i, call in enumerate(calls, start=1):
        monitor.step(call)
        truth = verify_trace(Trace(tuple(calls[:i])), spec).constraints[0].passed
        if monitor.verdicts["c"] is not Verdict.PENDING:  # decided: every extension agrees
            assert (monitor.verdicts["c"] is Verdict.SATISFIED) == truth
        assert (monitor.finish()["c"] is Verdict.SATISFIED) == truth


def test_a_counter_keeps_no_calls_and_decides_online() -> None:
    """The state is the count (saved as such); a budget is violated when it is passed, not at the end."""
    monitor = Monitor.for_formula(parse_formula("CalledN(a, 100, <=)"))
    for _ in range(100):
        assert monitor.step(Call("a")) is Verdict.PENDING
    assert monitor.save()["constraints"]["formula"] == {"count": 100}
    assert monitor.step(Call("a")) is Verdict.VIOLATED


def test_a_state_saved_with_kept_calls_restores_as_the_count() -> None:
    """A state saved when such a count kept its calls restores as their count of the tool."""
    formula = parse_formula("CalledN(a, 100, >=)")
    doc = Monitor.for_formula(formula).save()
    doc["constraints"]["formula"] = {
        "calls": [{"tool_name": "a", "arguments": {}}, {"tool_name": "b", "arguments": {}}],
        "error": None,
    }
    doc["position"] = 2
    restored = Monitor.for_formula(formula).restore(formula, doc)
    node = restored.monitor.node("formula")
    assert isinstance(node, CountNode)
    assert node.count == 1
