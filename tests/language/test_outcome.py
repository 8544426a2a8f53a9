"""`.ok` / `.error` on an atom: syntax, resolution and printing."""

from __future__ import annotations

import pytest

from agentguard import format_formula, parse_formula, parse_spec
from agentguard.errors import SpecSemanticError
from agentguard.language import ast as A


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("verify_identity.ok", A.Event("verify_identity", (), "ok")),
        ("verify_identity.error", A.Event("verify_identity", (), "error")),
        ("any.error", A.Event(None, (), "error")),
        (
            "lookup(order = 1).ok",
            A.Event("lookup", (A.Test(A.FieldRef(("order",)), "=", A.Literal(1)),), "ok"),
        ),
        ("`web.search`.ok", A.Event("web.search", (), "ok")),
    ],
)
def test_outcome_parses_to_an_event(text: str, expected: A.Event) -> None:
    """A suffix `.ok` / `.error` sets the atom's outcome; the printer writes it back."""
    f = parse_formula(text)
    assert f == expected
    assert parse_formula(format_formula(f)) == f


def test_outcome_is_part_of_identity() -> None:
    """`a`, `a.ok` and `a.error` are three different atoms."""
    assert len({parse_formula(t) for t in ("a", "a.ok", "a.error")}) == 3


def test_macro_expanding_to_an_atom_takes_an_outcome() -> None:
    """A macro argument or body that is an atom can carry the outcome."""
    spec = parse_spec(
        "def first(p, q) := !q W p\n"
        "def verified := verify_identity\n"
        "constraint c := first(lookup.ok, refund) & F verified.ok\n"
    )
    f = spec.constraints[0].formula
    assert isinstance(f, A.And)
    assert f.left == A.WeakUntil(A.Not(A.Event("refund")), A.Event("lookup", (), "ok"))
    assert f.right == A.Eventually(A.Event("verify_identity", (), "ok"))


def test_argument_named_ok_is_still_a_test() -> None:
    """An argument called `ok` keeps its meaning inside the atom."""
    f = parse_formula("t(ok = true)")
    assert f == A.Event("t", (A.Test(A.FieldRef(("ok",)), "=", A.Literal(True)),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a.done", "a.done is a value, not a formula .*`.ok`, `.error`"),
        ("lookup(k = 1).done", "unknown call outcome `.done`"),
        ("Called(a).ok", "`.ok` applies to a tool atom"),
        ("forall x in [1]: x.ok", "variable 'x' is used as a formula|x.ok is a value"),
    ],
)
def test_bad_outcomes_are_located_problems(text: str, message: str) -> None:
    """Misused outcome suffixes are semantic problems with a location."""
    with pytest.raises(SpecSemanticError, match=message) as info:
        parse_formula(text)
    assert info.value.problems[0].location is not None


def test_conflicting_outcomes() -> None:
    """A macro that already tests `.ok` cannot be asked for `.error`."""
    with pytest.raises(SpecSemanticError, match=r"both `\.ok` and `\.error`"):
        parse_spec("def v := verify.ok\nconstraint c := F v.error\n")


def test_outcome_on_undeclared_tool_is_checked() -> None:
    """The tool under `.ok` is checked against the declared tools."""
    with pytest.raises(SpecSemanticError, match="unknown tool 'nope'"):
        parse_spec("tool a()\nconstraint c := F nope.ok\n")
