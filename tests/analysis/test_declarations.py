"""Argument names and literal types checked against the spec's tool declarations."""

from __future__ import annotations

import pytest

from agentguard.analysis import lint_spec
from agentguard.language import parse_spec

DECLS = """tool cancel(reservation_id: str)
tool refund(amount: number, note?: str, tags?: list)
tool flag(on: bool)
"""


def warnings_of(formula: str) -> list[tuple[str, str]]:
    spec = parse_spec(DECLS + f"constraint c := {formula}")
    return [
        (w.kind, w.message)
        for w in lint_spec(spec)
        if w.kind in ("unknown-argument", "type-mismatch")
    ]


def test_misspelled_argument_gets_a_did_you_mean() -> None:
    """`reservaton_id` is not declared; the closest declared name is suggested, with its column."""
    spec = parse_spec(DECLS + 'constraint c := G !cancel(reservaton_id = "x")')
    (w,) = [w for w in lint_spec(spec) if w.kind == "unknown-argument"]
    assert "did you mean 'reservation_id'" in w.message
    assert (w.line, w.column) == (4, 27)


def test_argument_map_keys_are_checked() -> None:
    """A CalledWith map key the tool does not declare is reported too."""
    (found,) = warnings_of('CalledWith(cancel, {reservation: "A1"})')
    assert found[0] == "unknown-argument" and "reservation_id" in found[1]


@pytest.mark.parametrize(
    "formula",
    [
        'G !refund(amount > "500")',
        'G !refund(amount = "500")',
        "G !cancel(reservation_id = 7)",
        "G !refund(amount ~ /5/)",
        "G !flag(on > 1)",
        "G !refund(amount contains 5)",
        'G !refund(amount in ["a", "b"])',
    ],
)
def test_literal_of_an_impossible_type_is_a_mismatch(formula: str) -> None:
    """The test can never be true whatever the call, so it is reported."""
    (found,) = warnings_of(formula)
    assert found[0] == "type-mismatch"


@pytest.mark.parametrize(
    "formula",
    [
        "G !refund(amount > 500)",
        "G !refund(amount = 500.0)",
        "G !refund(note ~ /urgent/i)",
        'G !refund(tags contains "vip")',
        'G !cancel(reservation_id in ["A1", "B2"])',
        "G !refund(note = null)",
        "G !flag(on = true)",
        "forall v: G(refund(amount = v) -> O flag(on = true))",
        "G !refund(result.ok = false)",
        "G !undeclared_tool(x = 1)",
    ],
)
def test_well_typed_tests_are_silent(formula: str) -> None:
    """Declared names with values of the right type (and result paths) give no warning."""
    spec_text = DECLS + "tool undeclared_tool(x: int)\n" if "undeclared" in formula else DECLS
    spec = parse_spec(spec_text + f"constraint c := {formula}")
    assert [w for w in lint_spec(spec) if w.kind in ("unknown-argument", "type-mismatch")] == []


def test_requires_clauses_are_checked() -> None:
    """A tool's `requires` formula is linted like a constraint."""
    spec = parse_spec(DECLS + 'tool pay(to: str)\n    requires O cancel(reservaton_id = "x")\n')
    (w,) = lint_spec(spec)
    assert (w.kind, w.constraint) == ("unknown-argument", None)
