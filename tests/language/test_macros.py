"""Macro expansion (language/macros.py): budgeted in nodes and depth, recursion refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.errors import SpecSemanticError
from agentguard.language import macros, parse_spec
from agentguard.language.files import read_spec_file
from agentguard.language.resolver import Resolver


def _expanded(text: str) -> int:
    resolver = Resolver()
    resolver.resolve_spec(text, "<string>", None)
    return resolver.scope.expanded


def test_nodes_inside_an_expansion_are_counted_once_each() -> None:
    """``def m(x) := x & x`` used on ``F a``: the body's ``&``, its two ``x``, and each
    ``x``'s copy of ``F a`` (two nodes): 7."""
    assert _expanded("def m(x) := x & x\nconstraint c := m(F a)") == 7
    assert _expanded("constraint c := F a & F a") == 0  # no macro, nothing counted


def test_the_shipped_specs_expand_far_below_the_budget() -> None:
    """The budget is generous: every shipped spec uses under 1% of it."""
    shipped = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.ltl"))
    for path in shipped:
        resolver = Resolver()
        resolver.resolve_spec(read_spec_file(path), str(path), path.parent)
        assert resolver.scope.expanded < macros.MAX_EXPANSION // 100


def test_a_spec_over_the_budget_keeps_the_problems_found_before() -> None:
    """The refusal is raised at once, with what the resolver had already found."""
    text = (
        "constraint bad := G undeclared_macro(a)\n"
        "def d(x) := x & x & x & x & x & x & x & x & x & x\n"
        "constraint big := d(d(d(d(d(d(a))))))\n"
    )
    with pytest.raises(SpecSemanticError) as caught:
        parse_spec(text)
    first, last = caught.value.problems
    assert "unknown macro or predicate 'undeclared_macro'" in first.message
    assert last.location is not None and last.location.line == 3
    assert "macro 'd' expands to more than" in last.message


def test_recursion_is_refused_at_the_first_recursive_use() -> None:
    """Mutual recursion is found where it closes, not 64 expansions later."""
    with pytest.raises(SpecSemanticError) as caught:
        parse_spec("def p := q\ndef q := p\nconstraint c := p")
    (problem,) = caught.value.problems
    assert problem.message == "macro 'p' expands recursively"
    assert problem.location is not None and problem.location.line == 2


def test_a_macro_used_twice_in_an_argument_is_not_recursion() -> None:
    """``m(m(a))`` resolves the inner use where it was written: no recursion."""
    spec = parse_spec("def m(x) := F x\nconstraint c := m(m(a))")
    assert len(spec.constraints) == 1
