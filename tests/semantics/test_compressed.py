"""Stutter-reduced evaluation of quantifier instances equals the dense evaluation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Trace, parse_formula
from agentguard.language import ast as A
from agentguard.semantics.compressed import Compressed
from agentguard.semantics.evaluator import Evaluator
from tests.strategies import propositional, quantified, traces


@settings(max_examples=400, deadline=None)
@given(quantified(), traces(max_size=12))
def test_compressed_instances_equal_dense(f: A.Formula, t: Trace) -> None:
    """For every domain value, the compressed value at 0 equals the dense one."""
    assert isinstance(f, A.Quantified)
    if not len(t):
        return
    ev = Evaluator(t)
    comp = Compressed(ev)
    if not comp.applies(f.body):
        return
    values = ev.parametric_domain(f) if f.domain is None else ev.domain(f.domain, {})
    for v in values:
        env = {f.var: v}
        assert comp.holds_at_start(f.body, env) == bool(Evaluator(t).holds(f.body, 0, env))


@settings(max_examples=300, deadline=None)
@given(propositional(past=True, max_leaves=6), st.sampled_from(["a", "b"]), traces(max_size=12))
def test_closed_parts_may_count_steps(closed: A.Formula, tool: str, t: Trace) -> None:
    """Closed subformulas (even with X, Y or bounds) combine with an open step-free part."""
    body = A.Always(
        A.Implies(A.Event(tool, (A.Test(A.FieldRef(("k",)), "=", A.Var("x")),)), closed)
    )
    if not len(t):
        return
    ev = Evaluator(t)
    comp = Compressed(ev)
    assert comp.applies(body)
    for v in ev.parametric_domain(A.Quantified("forall", "x", None, body)):
        env = {"x": v}
        assert comp.holds_at_start(body, env) == Evaluator(t).holds(body, 0, env)


def test_step_counting_open_parts_fall_back() -> None:
    """An open part under X or a bound is not compressed."""
    comp = Compressed(Evaluator(Trace.of("a")))
    assert not comp.applies(parse_formula("forall x: G(a(k = x) -> X b(k = x))").body)  # type: ignore[union-attr]
    assert not comp.applies(parse_formula("forall x: F[<=2] a(k = x)").body)  # type: ignore[union-attr]
    assert comp.applies(parse_formula("forall x: G(a(k = x) -> O b(k = x))").body)  # type: ignore[union-attr]


@settings(max_examples=200, deadline=None)
@given(quantified(), traces(max_size=12))
def test_numpy_path_equals_dense(f: A.Formula, t: Trace) -> None:
    """The numpy branch (used for long compressed traces) agrees too."""
    import agentguard.semantics.compressed as C

    assert isinstance(f, A.Quantified)
    if not len(t):
        return
    saved = C._LIST_LIMIT
    C._LIST_LIMIT = -1
    try:
        ev = Evaluator(t)
        comp = Compressed(ev)
        if not comp.applies(f.body):
            return
        values = ev.parametric_domain(f) if f.domain is None else ev.domain(f.domain, {})
        for v in values:
            env = {f.var: v}
            assert comp.holds_at_start(f.body, env) == Evaluator(t).holds(f.body, 0, env)
    finally:
        C._LIST_LIMIT = saved
