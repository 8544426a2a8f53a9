"""Where a spec's online monitor cannot be exact and earliest (``agentguard lint``'s
``late`` warnings): the state budget, late splits, constructs checked at the end."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.monitor import machine
from agentguard.monitor.compiled import CompiledSpec, compile_spec
from agentguard.monitor.monitor import Monitor
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, FallbackPlan, Plan, QuantPlan
from agentguard.semantics.registry import Matcher, Registry


def budget_report(
    spec: A.Spec | Sequence[A.Constraint] | CompiledSpec,
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
) -> dict[str, str]:
    """Constraints whose online monitor cannot be exact and earliest, with where detection
    may come late (for ``agentguard lint``'s ``late`` warnings); absent: exact online.

    Reasons: the automaton exceeds the state budget (found by exploring it from the start,
    as the first verdict does), a conjunction split into parts that read each other's
    calls (monitor/decompose.py), or a construct checked only at the end of the run.
    """
    compiled = (
        spec
        if isinstance(spec, CompiledSpec)
        else compile_spec(spec, registry=registry, match=match)
    )
    Monitor(compiled, registry=registry).classification()  # explores every automaton
    out: dict[str, str] = {}
    for name, plan in compiled.plans.items():
        reasons = _late(plan, machine.MAX_EXPLORE)
        if reasons:
            out[name] = "; ".join(dict.fromkeys(reasons))
    return out


def _late(plan: Plan, budget: int) -> list[str]:
    if isinstance(plan, (AutomatonPlan, QuantPlan)):
        if plan.machine.too_large:
            return [
                f"its automaton exceeds the state budget ({budget} states, "
                f"{machine.MAX_SPEC_EXPLORE} for all of the spec's automata): only decided "
                "residuals give verdicts, so a violation may be found late (at the end at "
                "worst)"
            ]
        return []
    if isinstance(plan, BoolPlan):
        out = [plan.late] if plan.late else []
        for child in plan.children:
            out.extend(_late(child, budget))
        return out
    if isinstance(plan, FallbackPlan):
        return [f"checked only at the end of the run ({plan.reason})"]
    assert_never(plan)
