"""The indexed decision of quantifiers equals one evaluation per value (and the textbook one)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.language.walk import subformulas
from agentguard.semantics.evaluator import Evaluator
from agentguard.trace.model import Call, Trace
from tests.semantics.reference import ref_holds
from tests.strategies import Binary, temporal

TOOLS = ("a", "b", "c")
FIELDS = ("x", "y")
# values whose equalities trip a naive index: 1 = 1.0, true != 1, "1" != 1, [1] = (1,)
VALUES: tuple[Any, ...] = (1, 1.0, True, "1", 2, None, [1], {"k": 1}, float("nan"))


def _event(var_names: tuple[str, ...]) -> st.SearchStrategy[A.Formula]:
    """An event atom on a tool, testing fields against variables, literals, or both."""

    def build(tool: str | None, picks: list[tuple[str, str, Any]], outcome: str | None) -> A.Event:
        tests = []
        for fld, op, operand in picks:
            value: A.Term = A.Var(operand) if isinstance(operand, str) else A.Literal(operand[0])
            tests.append(A.Test(A.FieldRef((fld,)), op, value))
        return A.Event(tool, tuple(tests), outcome)

    operand = st.one_of(st.sampled_from(var_names), st.tuples(st.sampled_from(VALUES[:6])))
    pick = st.tuples(
        st.sampled_from(FIELDS), st.sampled_from(["=", "=", "=", "=", "=", "!="]), operand
    )
    return st.builds(
        build,
        st.sampled_from([*TOOLS, None]),
        st.lists(pick, max_size=2),
        st.sampled_from([None, None, "ok", "error"]),
    )


def _bodies(var_names: tuple[str, ...]) -> st.SearchStrategy[A.Formula]:
    leaf: st.SearchStrategy[A.Formula] = st.one_of(
        _event(var_names),
        st.sampled_from([A.Const(True), A.Const(False), A.TracePredicate("Called", ("a",))]),
    )
    binary: list[Binary] = [A.And, A.Or, A.Implies, A.Iff, A.Until, A.WeakUntil, A.Release, A.Since]
    return st.recursive(leaf, lambda c: temporal(c, binary), max_leaves=5)


def _domains() -> st.SearchStrategy[A.Domain | A.ListLiteral | None]:
    return st.one_of(
        st.none(),
        st.none(),
        st.builds(
            lambda t, f: A.Domain("args", t, (f,)), st.sampled_from(TOOLS), st.sampled_from(FIELDS)
        ),
        st.builds(
            lambda vs: A.ListLiteral(tuple(A.Literal(v) for v in vs)),
            st.lists(st.sampled_from(VALUES[:6]), max_size=3),
        ),
    )


def quantified() -> st.SearchStrategy[A.Formula]:
    """``forall/exists o: body``, possibly with an inner quantifier over ``p`` (nesting)."""
    kind = st.sampled_from(["forall", "exists"])
    inner = st.builds(A.Quantified, kind, st.just("p"), _domains(), _bodies(("o", "p")))
    body = st.one_of(_bodies(("o",)), _bodies(("o",)), inner)
    return st.builds(A.Quantified, kind, st.just("o"), _domains(), body)


def _call(tool: str, args: dict[str, Any], error: bool) -> Call:
    return Call(tool, args, "ok", error=error)


def traces() -> st.SearchStrategy[Trace]:
    args = st.dictionaries(st.sampled_from(FIELDS), st.sampled_from(VALUES), max_size=2)
    call = st.builds(_call, st.sampled_from(TOOLS), args, st.booleans())
    return st.builds(
        lambda cs: Trace(tuple(c.at(i) for i, c in enumerate(cs))), st.lists(call, max_size=7)
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quantified(), traces())
def test_indexed_equals_one_evaluation_per_value(f: A.Formula, trace: Trace) -> None:
    """Truth and the decisive value (first counterexample / witness) match the plain loop."""
    assert isinstance(f, A.Quantified)
    indexed, plain = Evaluator(trace), Evaluator(trace, indexed=False)
    assert indexed.holds(f) == plain.holds(f)
    if len(trace):
        got, expected = indexed.decisive_value(f), plain.decisive_value(f)
        assert (got is None) == (expected is None)
        if got is not None and expected is not None:
            assert got[0] is expected[0]  # the same domain element, in domain order


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quantified(), traces())
def test_indexed_equals_the_textbook_semantics(f: A.Formula, trace: Trace) -> None:
    """The indexed verdict equals the naive recursive evaluator's (which knows no ``.ok`` /
    ``.error`` outcomes, so formulas with one are left to the per-value comparison)."""
    assume(not any(isinstance(g, A.Event) and g.outcome for g in subformulas(f)))
    assert Evaluator(trace).holds(f) == ref_holds(f, trace)


def test_one_value_in_two_argument_positions() -> None:
    """``a(x = o, y = o)`` matches only calls whose two fields hold the same value."""
    spec = parse_spec("constraint c := forall o: G(a(x = o, y = o) -> O b(x = o))")
    f = spec.constraints[0].formula
    same = Trace((Call("b", {"x": 1}), Call("a", {"x": 1, "y": 1.0}).at(1)))
    crossed = Trace((Call("b", {"x": 1}), Call("a", {"x": 2, "y": 2}).at(1)))
    for trace, expected in ((same, True), (crossed, False)):
        assert Evaluator(trace).holds(f) is expected
        assert Evaluator(trace, indexed=False).holds(f) is expected


def test_unmatched_values_are_decided_by_one_fold() -> None:
    """Orders never refunded in a lane hold without one evaluation each (and the verdict
    still names the first order that breaks the rule)."""
    spec = parse_spec(
        "constraint c := forall o: G(refund(order = o, lane = 1) -> O lookup(order = o))"
    )
    f = spec.constraints[0].formula
    assert isinstance(f, A.Quantified)
    calls = [Call("lookup", {"order": v}) for v in range(200)]
    calls += [Call("refund", {"order": 500, "lane": 1}), Call("refund", {"order": 7, "lane": 1})]
    trace = Trace(tuple(c.at(i) for i, c in enumerate(calls)))
    ev = Evaluator(trace)
    assert ev.decisive_value(f) == (500,)
    assert ev.decisive_value(f) == Evaluator(trace, indexed=False).decisive_value(f)
