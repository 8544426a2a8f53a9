"""The shared formula walker: children of every node type, iteratively."""

from __future__ import annotations

from typing import get_args

import pytest

from agentguard.language import ast as A
from agentguard.language import parse_formula
from agentguard.language.walk import FORMULA_TYPES, children, is_formula, subformulas

E = A.Event("a")
SAMPLES: dict[type, tuple[A.Formula, tuple[A.Formula, ...]]] = {
    A.Const: (A.Const(True), ()),
    A.Event: (E, ()),
    A.Compare: (A.Compare(A.MetricRef(("n",)), "<", A.Literal(1)), ()),
    A.Not: (A.Not(E), (E,)),
    A.And: (A.And(E, A.Const(False)), (E, A.Const(False))),
    A.Or: (A.Or(E, E), (E, E)),
    A.Implies: (A.Implies(E, E), (E, E)),
    A.Iff: (A.Iff(E, E), (E, E)),
    A.Next: (A.Next(E), (E,)),
    A.Eventually: (A.Eventually(E, 2), (E,)),
    A.Always: (A.Always(E), (E,)),
    A.Until: (A.Until(E, E), (E, E)),
    A.WeakUntil: (A.WeakUntil(E, E), (E, E)),
    A.Release: (A.Release(E, E), (E, E)),
    A.Yesterday: (A.Yesterday(E), (E,)),
    A.Once: (A.Once(E), (E,)),
    A.Historically: (A.Historically(E), (E,)),
    A.Since: (A.Since(E, E), (E, E)),
    A.Quantified: (A.Quantified("forall", "x", None, E), (E,)),
    A.TracePredicate: (A.TracePredicate("Called", ("a",)), ()),
    A.UserPredicate: (A.UserPredicate("p", (A.Literal(1),)), ()),
}


def test_every_formula_type_is_covered() -> None:
    """The walker knows exactly the members of `ast.Formula`."""
    assert set(FORMULA_TYPES) == set(get_args(A.Formula)) == set(SAMPLES)


@pytest.mark.parametrize("kind", list(SAMPLES), ids=lambda k: k.__name__)
def test_children(kind: type) -> None:
    """Each node's direct subformulas, left to right; terms are not formulas."""
    node, expected = SAMPLES[kind]
    assert is_formula(node)
    assert children(node) == expected


def test_terms_are_not_formulas() -> None:
    """Terms and tests are not formula nodes."""
    assert not is_formula(A.Literal(1))
    assert not is_formula(A.Test(A.FieldRef(("k",)), "=", A.Literal(1)))


def test_subformulas_preorder_and_deep() -> None:
    """`subformulas` lists parents first, left to right, and needs no recursion."""
    f = parse_formula("a & (b U !c)")
    names = [type(g).__name__ for g in subformulas(f)]
    assert names == ["And", "Event", "Until", "Event", "Not", "Event"]
    deep = parse_formula("!" * 5000 + "a")
    assert sum(1 for _ in subformulas(deep)) == 5001
