"""The state budget does not fail open silently: it is reported, and lint can say `late`."""

from __future__ import annotations

import pytest

from agentguard.language import parse_formula, parse_spec
from agentguard.monitor import FormulaMonitor, Monitor, Verdict, budget_report
from agentguard.trace.model import Call

# after `z` the obligation is `G !a & F a`: unsatisfiable, but no residual says false
BLIND = "G(z -> (G !a & F a))"


def test_an_exact_monitor_refutes_the_call() -> None:
    """Within the budget the unsatisfiable obligation is a violation at once."""
    assert FormulaMonitor(parse_formula(BLIND)).step(Call("z")) is Verdict.VIOLATED


@pytest.mark.usefixtures("small_budget")
def test_past_the_budget_the_constraint_is_reported() -> None:
    """Past the budget the verdict is PENDING (sound, late) and over_budget names it."""
    m = Monitor(parse_spec(f"constraint blind := {BLIND}\nconstraint fine := F b\n"))
    assert m.step(Call("z"))["blind"] is Verdict.PENDING
    assert m.over_budget() == ("blind",)
    assert m.finish()["blind"] is Verdict.VIOLATED  # the end is still exact


@pytest.mark.usefixtures("small_budget")
def test_budget_report_says_late_for_lint() -> None:
    """budget_report names the constraint and why its detection may come late."""
    spec = parse_spec(f"constraint blind := {BLIND}\nconstraint fine := F b\n")
    report = budget_report(spec)
    assert set(report) == {"blind"}
    assert "state budget" in report["blind"]


def test_budget_report_names_late_splits_and_end_checks() -> None:
    """A late split and a construct checked at the end are reported too; exact ones not."""
    late = " & ".join(f"G(t{i} -> X u{i})" for i in range(12))
    spec = parse_spec(
        f"constraint split := {late}\n"
        "constraint exact := F a & F b\n"
        "constraint end := G(forall x in args(t.i): F u(s = x))\n"
    )
    report = budget_report(spec)
    assert set(report) == {"split", "end"}
    assert "independent parts" in report["split"]
    assert "end of the run" in report["end"]
