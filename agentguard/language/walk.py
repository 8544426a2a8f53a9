"""The one walker over formula trees: a formula's direct subformulas.

Every stage that recurses over formulas (printing, evaluation, compilation, analysis)
asks this module for a node's children instead of knowing each node's field names, and
its dispatch ends in ``assert_never``: a new operator added to :data:`ast.Formula`
makes mypy name this function until the operator is handled here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeGuard, get_args

from typing_extensions import assert_never

from agentguard.language import ast as A

FORMULA_TYPES: tuple[type, ...] = get_args(A.Formula)
"""Every formula node class (the members of :data:`ast.Formula`)."""


def is_formula(node: Any) -> TypeGuard[A.Formula]:
    """Is ``node`` a formula node (not a term, test or spec item)?"""
    return isinstance(node, FORMULA_TYPES)


def children(f: A.Formula) -> tuple[A.Formula, ...]:
    """The direct subformulas of ``f``, left to right (terms and tests are not formulas)."""
    if isinstance(f, (A.Const, A.Event, A.Compare, A.TracePredicate, A.UserPredicate)):
        return ()
    if isinstance(f, (A.Not, A.Next, A.Eventually, A.Always, A.Yesterday, A.Once, A.Historically)):
        return (f.operand,)
    if isinstance(f, (A.And, A.Or, A.Implies, A.Iff, A.Until, A.WeakUntil, A.Release, A.Since)):
        return (f.left, f.right)
    if isinstance(f, A.Quantified):
        return (f.body,)
    assert_never(f)


def subformulas(f: A.Formula) -> Iterator[A.Formula]:
    """``f`` and every formula below it, parents before children, without recursion
    (formulas the parser accepts can nest thousands deep)."""
    stack = [f]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))
