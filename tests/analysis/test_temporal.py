"""Temporal lint findings: each kind on a true positive, and silence where nothing is proven."""

from __future__ import annotations

import pytest

from agentguard.analysis import lint_spec, search, temporal
from agentguard.language import parse_spec


def kinds(text: str) -> list[tuple[str, str | None]]:
    return [(w.kind, w.constraint) for w in lint_spec(parse_spec(text))]


def test_unsatisfiable_constraint_is_reported_at_its_line() -> None:
    """`F a & G !a` has no satisfying trace; the warning names the constraint and its line."""
    spec = parse_spec("constraint ok := G !b\nconstraint never := F a & G !a")
    (w,) = lint_spec(spec)
    assert (w.kind, w.constraint, w.line, w.column) == ("unsatisfiable", "never", 2, 1)


def test_valid_constraint_checks_nothing() -> None:
    """`G(a | !a)` holds on every trace."""
    assert kinds("constraint taut := G(a | !a)") == [("valid", "taut")]


def test_conflict_names_a_minimal_set() -> None:
    """`F pay` and `G !pay` conflict; an unrelated third constraint is not in the set."""
    spec = parse_spec(
        "constraint must := F pay\nconstraint other := G !wipe\nconstraint never := G !pay"
    )
    (w,) = [w for w in lint_spec(spec) if w.kind == "conflict"]
    assert (w.constraint, w.related) == ("must", ("never",))


def test_conflict_needs_all_three() -> None:
    """A conflict only the three together make names all three."""
    spec = parse_spec("constraint x := F a\nconstraint y := G(a -> X b)\nconstraint z := G !b")
    (w,) = [w for w in lint_spec(spec) if w.kind == "conflict"]
    assert {w.constraint, *w.related} == {"x", "y", "z"}


def test_hard_stop_on_pure_liveness_never_blocks() -> None:
    """`F cite` with HARD_STOP is only checked when the run ends."""
    assert kinds("constraint cite severity HARD_STOP := F cite") == [("never-blocks", "cite")]


@pytest.mark.parametrize("severity", ["SOFT_BLOCK", "BLOCK_AND_WARN", "TOLERATE"])
def test_liveness_with_a_sendback_severity_is_not_flagged(severity: str) -> None:
    """SOFT_BLOCK and BLOCK_AND_WARN still send the final answer back: no warning."""
    assert kinds(f"constraint cite severity {severity} := F cite") == []


def test_safety_with_hard_stop_blocks() -> None:
    """A constraint with bad prefixes can block, so it is not flagged."""
    assert kinds("constraint no_rm severity HARD_STOP := G !rm & F done") == []


def test_fallback_constraint_is_late() -> None:
    """A constraint the monitor checks only at the end of the run gets a `late` warning."""
    found = kinds("constraint whole := Predicate(grounded)")
    assert found == [("late", "whole")]


def test_state_budget_is_late(monkeypatch: pytest.MonkeyPatch) -> None:
    """A constraint whose automaton exceeds the monitor's exploration bound is `late`."""
    monkeypatch.setattr(search, "SECONDS", 120.0)  # the state bound, not the clock, decides
    assert kinds("constraint many := F[<=6000] a") == [("late", "many")]


def test_a_late_constraint_names_a_bound_wider_than_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The `late` warning of a window wider than the state budget names the operator and
    its place, so the author knows which bound to narrow."""
    monkeypatch.setattr(search, "SECONDS", 120.0)
    (w,) = lint_spec(parse_spec("constraint c := F[<=1000000] a"))
    assert w.kind == "late"
    assert w.message.endswith("(F[<=1000000] at 1:17 counts up to 1,000,000 steps)")


def test_past_the_specs_clock_nothing_more_is_claimed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Explorations stop at the spec's wall-clock bound (``SPEC_SECONDS``, all constraints
    together); a constraint left unexplored gets no finding, never a guess."""
    monkeypatch.setattr(temporal, "SPEC_SECONDS", 0.0)
    assert kinds("constraint never := F a & G !a") == []


def test_data_tests_abstracted_soundly() -> None:
    """Unsatisfiable whatever the arguments: reported, and the message says data was abstracted."""
    (w,) = lint_spec(parse_spec("constraint c := F refund(amount > 5) & G !refund"))
    assert w.kind == "unsatisfiable" and "abstracted" in w.message


def test_data_level_contradiction_is_not_claimed() -> None:
    """`amount > 5` and `!(amount > 3)` clash only through the data: lint claims nothing."""
    assert kinds("constraint c := F refund(amount > 5) & G !refund(amount > 3)") == []


def test_exists_with_unsatisfiable_body_is_unsatisfiable() -> None:
    """No binding can satisfy `F a(x = v) & G !a`, so the `exists` is false on every trace."""
    assert kinds("constraint c := exists v: F a(x = v) & G !a") == [("unsatisfiable", "c")]


def test_forall_over_an_open_domain_is_not_unsatisfiable() -> None:
    """`forall` over the trace's values holds on a trace with none, so nothing is claimed."""
    assert kinds("constraint c := forall v: F a(x = v) & G !a") == []


def test_budget_constraint_is_not_flagged() -> None:
    """A call-count budget is satisfiable and not valid: no warning."""
    assert kinds("constraint c severity HARD_STOP := metrics.num_tool_calls <= 3") == []
