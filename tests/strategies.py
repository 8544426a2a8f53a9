"""Hypothesis strategies for AgentLTL formulas and traces (shared by several test modules)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.trace import Call, Trace

TOOLS = ("a", "b", "c")


Binary = Callable[[A.Formula, A.Formula], A.Formula]
"""A binary operator's node class, as a constructor of its two operands."""


def temporal(
    child: st.SearchStrategy[A.Formula],
    binary: Sequence[Binary],
    bound: st.SearchStrategy[int | None] | None = None,
) -> st.SearchStrategy[A.Formula]:
    """One operator over ``child`` formulas: not, the future and past unary operators
    (strict or weak ``X``/``Y``, optionally bounded ``F G O H``) or one of ``binary``; the
    grow step of ``st.recursive`` for the data and quantified formulas of several tests."""
    bound = bound if bound is not None else st.one_of(st.none(), st.integers(0, 2))
    return st.one_of(
        st.builds(A.Not, child),
        st.builds(A.Next, child, st.booleans()),
        st.builds(A.Yesterday, child, st.booleans()),
        st.builds(A.Eventually, child, bound),
        st.builds(A.Always, child, bound),
        st.builds(A.Once, child, bound),
        st.builds(A.Historically, child, bound),
        st.builds(lambda op, left, right: op(left, right), st.sampled_from(binary), child, child),
    )


def propositional(
    tools: tuple[str, ...] = TOOLS, *, past: bool = True, max_leaves: int = 12
) -> st.SearchStrategy[A.Formula]:
    """Formulas whose atoms test only the tool name."""
    leaves = st.one_of(
        st.sampled_from([A.Event(t) for t in tools]), st.builds(A.Const, st.booleans())
    )

    def extend(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
        bound = st.one_of(st.none(), st.integers(0, 3))
        unary = [
            st.builds(A.Not, child),
            st.builds(A.Next, child, st.booleans()),
            st.builds(A.Eventually, child, bound),
            st.builds(A.Always, child, bound),
        ]
        if past:
            unary += [
                st.builds(A.Yesterday, child, st.booleans()),
                st.builds(A.Once, child, bound),
                st.builds(A.Historically, child, bound),
            ]
        binary_types = [A.And, A.Or, A.Implies, A.Iff, A.Until, A.WeakUntil, A.Release]
        if past:
            binary_types.append(A.Since)
        binary = [st.builds(t, child, child) for t in binary_types]
        return st.one_of(*unary, *binary)

    return st.recursive(leaves, extend, max_leaves=max_leaves)


_values = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.text("abc /.-", max_size=4),
    st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 2)),
)
_paths = st.sampled_from(
    [("k",), ("result",), ("result", "x"), ("args", "result"), ("k", 0), ("odd-key",)]
)
_ops = st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "contains", "in"])


def _test(var: str | None) -> st.SearchStrategy[A.Test]:
    value: st.SearchStrategy[A.Term] = st.builds(A.Literal, _values)
    if var is not None:
        value = st.one_of(value, st.just(A.Var(var)))
    regex = st.builds(
        lambda p: A.Test(A.FieldRef(("k",)), "~", A.Regex(p, "i")),
        st.sampled_from(["^a", "x/y", r"\.env$"]),
    )
    return st.one_of(
        st.builds(lambda p, o, v: A.Test(A.FieldRef(p), o, v), _paths, _ops, value), regex
    )


def data_formulas(var: str | None = None) -> st.SearchStrategy[A.Formula]:
    """Formulas with argument/result tests, trace predicates, comparisons and quantifiers."""
    events = st.builds(
        lambda t, tests: A.Event(t, tuple(tests)),
        st.sampled_from([*TOOLS, None, "web-search"]),
        st.lists(_test(var), max_size=2),
    )
    preds = st.one_of(
        st.builds(lambda t: A.TracePredicate("Called", (t,)), st.sampled_from(TOOLS)),
        st.builds(
            lambda t, n, o: A.TracePredicate("CalledN", (t, n, o)),
            st.sampled_from(TOOLS),
            st.integers(0, 3),
            st.sampled_from(["=", ">=", "<=", ">", "<"]),
        ),
        st.builds(
            lambda a, b: A.TracePredicate("Before", (a, b)),
            st.sampled_from(TOOLS),
            st.sampled_from(TOOLS),
        ),
        st.builds(
            lambda ts: A.TracePredicate("InOrder", (tuple(ts),)),
            st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3),
        ),
        st.builds(
            lambda a, n, b, m: A.TracePredicate("InstanceBefore", (a, n, b, m)),
            st.sampled_from(TOOLS),
            st.integers(0, 2),
            st.sampled_from(TOOLS),
            st.integers(0, 2),
        ),
        st.builds(
            lambda t, v: A.TracePredicate("CalledWith", (t, A.MapLiteral((("k", A.Literal(v)),)))),
            st.sampled_from(TOOLS),
            _values,
        ),
    )
    compare = st.builds(
        lambda v: A.Compare(A.MetricRef(("n",)), "<=", A.Literal(v)), st.integers(0, 5)
    )
    leaves = st.one_of(events, preds, compare)

    def extend(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
        return st.one_of(
            st.builds(A.Not, child),
            st.builds(A.Eventually, child, st.one_of(st.none(), st.integers(0, 2))),
            st.builds(A.Once, child),
            st.builds(A.And, child, child),
            st.builds(A.Until, child, child),
            st.builds(A.Since, child, child),
        )

    return st.recursive(leaves, extend, max_leaves=6)


def quantified() -> st.SearchStrategy[A.Formula]:
    domains = st.one_of(
        st.none(),
        st.builds(A.Domain, st.just("args"), st.sampled_from([*TOOLS, None]), st.just(("k",))),
        st.builds(A.Domain, st.just("results"), st.sampled_from(TOOLS), st.just(())),
    )
    return st.builds(
        lambda kind, dom, body: A.Quantified(kind, "x", dom, body),
        st.sampled_from(["forall", "exists"]),
        domains,
        data_formulas("x"),
    )


def traces(tools: tuple[str, ...] = TOOLS, max_size: int = 8) -> st.SearchStrategy[Trace]:
    calls = st.builds(
        lambda name, k, r: Call(name, {"k": k, "result": k}, r),
        st.sampled_from(tools),
        st.one_of(
            st.integers(0, 3),
            st.sampled_from(["a", "x/y.env"]),
            st.lists(st.integers(0, 3), max_size=2),
        ),
        st.one_of(st.integers(0, 3), st.builds(lambda v: {"result": v, "x": v}, st.integers(0, 3))),
    )
    return st.builds(
        lambda cs, n: Trace(tuple(cs), {"n": n}),
        st.lists(calls, max_size=max_size),
        st.integers(0, 8),
    )
