"""Budgets: metrics.num_tool_calls compared with a constant is decided by the call count."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.language import parse_formula
from agentguard.monitor import FormulaMonitor, Monitor, Verdict
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import Call, Trace
from tests.monitor.strategies import LETTERS, completions, formulas

S, V, P = Verdict.SATISFIED, Verdict.VIOLATED, Verdict.PENDING
OPS = ("<=", "<", "=", ">=", ">", "!=")


def verdicts(text: str, names: str) -> list[Verdict]:
    m = Monitor.for_formula(parse_formula(text))
    return [m.verdict, *(m.step(Call(n)) for n in names)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metrics.num_tool_calls <= 2", [P, P, P, V, V]),
        ("metrics.num_tool_calls < 2", [P, P, V, V, V]),
        ("metrics.num_tool_calls = 2", [P, P, P, V, V]),
        ("metrics.num_tool_calls >= 2", [P, P, S, S, S]),
        ("metrics.num_tool_calls > 2", [P, P, P, S, S]),
        ("metrics.num_tool_calls != 2", [P, P, P, S, S]),
        ("2 >= metrics.num_tool_calls", [P, P, P, V, V]),
        ("G(b -> O a) & metrics.num_tool_calls <= 3", [P, P, P, P, V]),
        ("F c | metrics.num_tool_calls >= 3", [P, P, P, S, S]),
        ("metrics.cost <= 2", [P, P, P, P, P]),
    ],
)
def test_the_count_decides_budgets_as_soon_as_it_can(text: str, expected: list[Verdict]) -> None:
    """<=, <, = are violated once the count exceeds; >=, >, != satisfied once reached."""
    assert verdicts(text, "abab") == expected


def test_finish_reads_the_real_metrics_even_after_an_online_verdict() -> None:
    """An online budget verdict assumes the count; finish(metrics) decides as offline."""
    m = Monitor.for_formula(parse_formula("metrics.num_tool_calls <= 1"))
    m.step(Call("a"))
    assert m.step(Call("b")) is V
    assert m.finish({"num_tool_calls": 2}) is V
    assert m.finish({"num_tool_calls": 1}) is S
    assert m.finish() is V  # no metrics record: the comparison is false, as offline


def test_uncounted_tools_do_not_use_the_budget() -> None:
    """A final answer is not a tool call: Monitor(uncounted=...) leaves it out of the count."""
    spec = [A.Constraint("budget", parse_formula("metrics.num_tool_calls <= 1"))]
    m = Monitor(spec, uncounted=("final_answer",))
    m.step(Call("a"))
    assert m.peek(Call("final_answer"), ending=True).final["budget"] is True
    assert m.peek(Call("b")).verdicts["budget"] is V


def test_ending_short_of_a_minimum_is_known_before_the_end() -> None:
    """peek(ending=True) reads the budget with the run ending: >= 3 after 1 call is false."""
    m = Monitor.for_formula(parse_formula("metrics.num_tool_calls >= 3"))
    m.step(Call("a"))
    assert m.peek(Call("b"), ending=True).final["formula"] is False
    assert (
        m.monitor.hint("formula", Call("b"), ending=True)
        == "make 1 more tool call before finishing"
    )


def test_a_budget_violation_has_a_hint() -> None:
    """The hint of a spent budget says to stop calling tools."""
    m = Monitor.for_formula(parse_formula("metrics.num_tool_calls <= 1"))
    m.step(Call("a"))
    hint = m.monitor.hint("formula", Call("b"))
    assert "no further tool calls" in hint and "call 2" in hint


def test_the_count_survives_save_and_restore() -> None:
    """The call count is part of the saved state."""
    m = Monitor.for_formula(parse_formula("metrics.num_tool_calls <= 2"))
    m.step(Call("a"))
    m.step(Call("b"))
    doc = json.loads(json.dumps(m.save()))
    other = FormulaMonitor.restore(parse_formula("metrics.num_tool_calls <= 2"), doc)
    assert other.step(Call("c")) is V


def budget_formulas() -> st.SearchStrategy[A.Formula]:
    """Random formulas with budget comparisons among their leaves."""
    budget = st.builds(
        lambda op, k, flip: (
            A.Compare(A.Literal(k), op, A.MetricRef(("num_tool_calls",)))
            if flip
            else A.Compare(A.MetricRef(("num_tool_calls",)), op, A.Literal(k))
        ),
        st.sampled_from(OPS),
        st.integers(0, 4),
        st.booleans(),
    )
    return st.one_of(
        budget,
        st.builds(A.And, budget, formulas(past=False)),
        st.builds(A.Or, formulas(past=False), budget),
        st.builds(A.Implies, budget, formulas(predicates=False)),
        st.builds(A.Always, st.builds(A.Or, formulas(predicates=False), budget), st.none()),
    )


def counted(names: list[str] | tuple[str, ...]) -> Trace:
    """The trace with its metrics record counting its calls."""
    return Trace(tuple(Call(n) for n in names), {"num_tool_calls": len(names)})


COMPLETIONS = completions(2)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(budget_formulas(), st.lists(st.sampled_from(LETTERS), max_size=5))
def test_budget_verdicts_are_sound_and_finals_are_offline(f: A.Formula, names: list[str]) -> None:
    """Decided prefix verdicts hold on every completion whose metrics count its calls;
    a proposal's ending truth and the final verdict equal holds() on the counted trace."""
    m = Monitor.for_formula(f)
    for i in range(len(names) + 1):
        if i:
            ended = m.peek(Call(names[i - 1]), ending=True).final["formula"]
            if ended is not None:
                assert ended == holds(f, counted(names[:i]))
        v = m.step(Call(names[i - 1])) if i else m.verdict
        if v is P:
            continue
        for extra in COMPLETIONS:
            assert holds(f, counted([*names[:i], *extra])) == (v is S)
    assert (m.finish({"num_tool_calls": len(names)}) is S) == holds(f, counted(names))
    other = {"num_tool_calls": 2}
    assert (m.finish(other) is S) == holds(f, Trace(counted(names).calls, other))
