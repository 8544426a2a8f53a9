"""The state budget does not fail open silently: it is reported, and lint can say `late`."""

from __future__ import annotations

import pytest

from agentguard.language import parse_formula, parse_spec
from agentguard.monitor import (
    FormulaMonitor,
    Monitor,
    Verdict,
    budget_report,
    compile_spec,
    machine,
)
from agentguard.monitor.compiled import clear_cache
from agentguard.monitor.plans import plan_machines
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


def test_the_machines_of_one_spec_share_one_exploration_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the spec's pool every further exploration is refused, as past a machine's own
    budget: a spec of many wide windows explores the pool once, not the budget per
    constraint; the constraints already explored stay exact."""
    clear_cache()
    monkeypatch.setattr(machine, "MAX_SPEC_EXPLORE", 2_500)
    text = "\n".join(f"constraint c{i} := G(b -> O[<={1000 + i}] a)" for i in range(6))
    try:
        compiled = compile_spec(parse_spec(text))
        m = Monitor(compiled)
        machines = [x for p in compiled.plans.values() for x in plan_machines(p)]
        assert len({id(x.pool) for x in machines}) == 1
        assert machines[0].pool is not None and 0 <= machines[0].pool.left < 1_000
        assert m.over_budget() == ("c2", "c3", "c4", "c5")  # c0 and c1 took ~1,000 each
        assert m.step(Call("b")) == dict.fromkeys(m.verdicts, Verdict.VIOLATED)
    finally:
        clear_cache()
