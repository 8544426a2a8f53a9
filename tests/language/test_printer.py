"""The printer writes canonical text that parses back to the same tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from agentguard import format_formula, format_spec, load_spec, parse_formula, parse_spec
from agentguard.language import ast as A
from tests.strategies import data_formulas, propositional, quantified


@settings(max_examples=400, deadline=None)
@given(propositional())
def test_propositional_round_trip(f: A.Formula) -> None:
    """Generated propositional formulas print and re-parse to an equal tree."""
    assert parse_formula(format_formula(f)) == f


@settings(max_examples=300, deadline=None)
@given(data_formulas())
def test_data_formula_round_trip(f: A.Formula) -> None:
    """Formulas with tests, predicates and comparisons round-trip."""
    assert parse_formula(format_formula(f)) == f


@settings(max_examples=200, deadline=None)
@given(quantified())
def test_quantified_round_trip(f: A.Formula) -> None:
    """Quantified formulas with variables in tests round-trip."""
    assert parse_formula(format_formula(f)) == f


@pytest.mark.parametrize("name", ["refund", "filesystem_safety", "appendix_b_fanout", "code_qa"])
def test_shipped_specs_round_trip(specs_dir: Path, name: str) -> None:
    """Every shipped spec prints to canonical text that parses to the same spec."""
    spec = load_spec(specs_dir / f"{name}.ltl")
    again = parse_spec(format_spec(spec))
    assert again.constraints == spec.constraints
    assert again.tools == spec.tools
    assert again.name == spec.name


def test_keyword_and_odd_names_are_quoted() -> None:
    """Tool names that are keywords or not identifiers are backtick-quoted."""
    f = A.And(A.Event("F"), A.Event("web.search"))
    text = format_formula(f)
    assert text == "`F` & `web.search`"
    assert parse_formula(text) == f
