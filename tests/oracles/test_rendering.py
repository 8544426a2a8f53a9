"""The generated agentguard text parses to the very formula the oracles were given.

If the rendering and agentguard's parser disagreed on a formula, an oracle comparison
would test the wrong formula; this pins the two together.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings

from agentguard.language import ast, parse_formula

from .formulas import (
    FRAGMENTS,
    MIXED,
    Atom,
    Bin,
    Bnd,
    Const,
    Formula,
    Fragment,
    Un,
    formulas,
    random_formula,
    to_agentguard,
)


def back(node: Any) -> Formula:
    """agentguard's syntax tree, read back into the generator's tree."""
    binary = {
        ast.And: "&",
        ast.Or: "|",
        ast.Implies: "->",
        ast.Iff: "<->",
        ast.Until: "U",
        ast.WeakUntil: "W",
        ast.Release: "R",
        ast.Since: "S",
    }
    if type(node) in binary:
        return Bin(binary[type(node)], back(node.left), back(node.right))  # type: ignore[arg-type]
    match node:
        case ast.Const(value=value):
            return Const(value)
        case ast.Event(tool=tool, tests=()) if tool is not None:
            return Atom(tool)
        case ast.Not(operand=operand):
            return Un("!", back(operand))
        case ast.Next(operand=operand, strong=strong):
            return Un("X" if strong else "N", back(operand))
        case ast.Yesterday(operand=operand, strong=strong):
            return Un("Y" if strong else "Z", back(operand))
    unbounded = {ast.Eventually: "F", ast.Always: "G", ast.Once: "O", ast.Historically: "H"}
    if type(node) in unbounded:
        op = unbounded[type(node)]
        if node.bound is None:
            return Un(op, back(node.operand))  # type: ignore[arg-type]
        return Bnd(f"{op}<=", node.bound, back(node.operand))  # type: ignore[arg-type]
    raise AssertionError(f"unexpected node {node!r}")


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=lambda f: f.name)
def test_rendered_text_parses_to_the_same_formula(fragment: Fragment) -> None:
    """Every seeded formula survives rendering and agentguard's parser unchanged."""
    rng = random.Random(301)
    for _ in range(700):
        formula = random_formula(rng, 4, fragment)
        assert back(parse_formula(to_agentguard(formula))) == formula, to_agentguard(formula)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(formula=formulas(depth=4, fragment=MIXED))
def test_rendering_round_trips(formula: Formula) -> None:
    """Hypothesis-generated formulas survive rendering and parsing unchanged."""
    assert back(parse_formula(to_agentguard(formula))) == formula
