"""Hypothesis strategies for random formulas over a few tools, built from the AST classes."""

from __future__ import annotations

from itertools import product
from typing import Final

from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.trace.model import Call, Trace

TOOLS: Final = ("a", "b", "c")
LETTERS: Final = ("a", "b", "c", "d")


def atoms() -> st.SearchStrategy[A.Formula]:
    return st.one_of(
        st.sampled_from([A.Event(t) for t in TOOLS]),
        st.sampled_from([A.Const(True), A.Const(False)]),
    )


def _unary(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
    bound = st.one_of(st.none(), st.integers(0, 3))
    return st.one_of(
        st.builds(A.Not, child),
        st.builds(A.Next, child, st.booleans()),
        st.builds(A.Eventually, child, bound),
        st.builds(A.Always, child, bound),
    )


def _past(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
    bound = st.one_of(st.none(), st.integers(0, 3))
    return st.one_of(
        st.builds(A.Yesterday, child, st.booleans()),
        st.builds(A.Once, child, bound),
        st.builds(A.Historically, child, bound),
        st.builds(A.Since, child, child),
    )


def _binary(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
    ops = st.sampled_from([A.And, A.Or, A.Implies, A.Iff, A.Until, A.WeakUntil, A.Release])
    return st.builds(lambda op, left, right: op(left, right), ops, child, child)


def past_formulas() -> st.SearchStrategy[A.Formula]:
    """Propositional past-time formulas (usable under past operators)."""
    return st.recursive(
        atoms(),
        lambda c: st.one_of(
            st.builds(A.Not, c), st.builds(A.And, c, c), st.builds(A.Or, c, c), _past(c)
        ),
        max_leaves=4,
    )


def trace_predicates() -> st.SearchStrategy[A.Formula]:
    t = st.sampled_from(TOOLS)
    n = st.integers(0, 2)
    return st.one_of(
        st.builds(lambda x: A.TracePredicate("Called", (x,)), t),
        st.builds(
            lambda x, k, op: A.TracePredicate("CalledN", (x, k, op)),
            t,
            n,
            st.sampled_from(["=", "<=", ">=", "<", ">"]),
        ),
        st.builds(lambda x, y: A.TracePredicate("Before", (x, y)), t, t),
        st.builds(lambda x, y: A.TracePredicate("After", (x, y)), t, t),
        st.builds(
            lambda xs, y: A.TracePredicate("AllBefore", (tuple(xs), y)), st.lists(t, max_size=2), t
        ),
        st.builds(lambda x, i, y, j: A.TracePredicate("InstanceBefore", (x, i, y, j)), t, n, t, n),
        st.builds(lambda xs: A.TracePredicate("InOrder", (tuple(xs),)), st.lists(t, max_size=3)),
        st.builds(lambda x, y, k: A.TracePredicate("WithinSteps", (x, y, k)), t, t, n),
        st.builds(lambda x, y: A.TracePredicate("BranchCalled", (x, y)), t, t),
    )


def formulas(*, past: bool = True, predicates: bool = True) -> st.SearchStrategy[A.Formula]:
    leaves = [atoms()]
    if past:
        leaves.append(_past(past_formulas()))
    if predicates:
        leaves.append(trace_predicates())
    return st.recursive(
        st.one_of(*leaves), lambda c: st.one_of(_unary(c), _binary(c)), max_leaves=6
    )


def traces(max_size: int = 6) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(LETTERS), max_size=max_size)


def completions(max_extra: int) -> list[tuple[str, ...]]:
    """Every continuation of up to ``max_extra`` letters (the empty one included)."""
    out: list[tuple[str, ...]] = []
    for k in range(max_extra + 1):
        out.extend(product(LETTERS, repeat=k))
    return out


def trace_of(names: list[str] | tuple[str, ...]) -> Trace:
    return Trace(tuple(Call(n) for n in names))
