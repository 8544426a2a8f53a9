"""Past-time `requires` formulas evaluated incrementally agree with the offline evaluator."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.language import ast as A
from agentguard.language import parse_formula, parse_spec
from agentguard.semantics.evaluator import holds
from agentguard.tools.precondition import past_formula
from agentguard.trace.model import Call, Trace
from tests.monitor.strategies import LETTERS, past_formulas


def with_data(f: A.Formula) -> A.Formula:
    """``a`` becomes ``a(k >= 1)``: argument tests go through the same evaluation."""
    if isinstance(f, A.Event) and f.tool == "a":
        return A.Event("a", (A.Test(A.FieldRef(("k",)), ">=", A.Literal(1)),))
    if isinstance(f, (A.Not, A.Yesterday, A.Once, A.Historically)):
        return dataclasses.replace(f, operand=with_data(f.operand))
    if isinstance(f, (A.And, A.Or, A.Implies, A.Iff, A.Since)):
        return dataclasses.replace(f, left=with_data(f.left), right=with_data(f.right))
    return f


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    past_formulas(),
    st.booleans(),
    st.lists(st.tuples(st.sampled_from(LETTERS), st.integers(0, 2)), min_size=1, max_size=7),
)
def test_incremental_value_equals_holds_at_the_last_position(
    f: A.Formula, data: bool, steps: list[tuple[str, int]]
) -> None:
    """At every position, the committed-then-proposed value equals holds(f, prefix, last)."""
    f = with_data(f) if data else f
    past = past_formula(f)
    assert past is not None
    calls = [Call(n, {"k": k}, "ok", i) for i, (n, k) in enumerate(steps)]
    for i, call in enumerate(calls):
        expected = holds(f, Trace(tuple(calls[: i + 1])), position=i)
        if i:  # through the previous call still in flight, then with it committed
            assert past.holds_at([calls[i - 1], call]) == expected
            past.advance(calls[i - 1])
        assert past.holds_at([call]) == expected
    assert past.position == len(calls) - 1


def test_formulas_outside_the_fragment_fall_back() -> None:
    """Future operators and trace predicates are not followed incrementally."""
    assert past_formula(parse_formula("F a")) is None
    assert past_formula(parse_formula("Called(a)")) is None
    assert past_formula(parse_formula("O a & !Y b")) is not None


def test_requires_follows_a_long_run() -> None:
    """On a 5,000-call run the precondition follows each call (O verify, and not twice in a row)."""
    spec = parse_spec(
        "tool a()\ntool verify()\ntool refund(n: int)\n  requires O verify & !Y refund"
    )
    fw = Firewall(spec, keep_trace=True)
    for name in ["verify", *["a"] * 5000]:
        fw.propose(name, {})
        fw.record(name, {}, "ok")
    d = fw.propose("refund", {"n": 1})
    assert d.action is Action.ALLOW
    fw.record("refund", {"n": 1}, "ok")
    assert fw.propose("refund", {"n": 2}).violations[0].constraint == "tool:refund:requires"
    fw.propose("a", {})
    fw.record("a", {}, "ok")
    assert fw.propose("refund", {"n": 3}).action is Action.ALLOW
