"""Score a completed trace against a spec: ``verify_trace``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentguard._recursion import allow_deep
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.scoring.explain import explain
from agentguard.scoring.report import ComplianceReport, ConstraintResult, label_of, score_of
from agentguard.scoring.tool_use import check_tool_use
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.registry import Matcher, Registry
from agentguard.trace.loaders import trace_from_json
from agentguard.trace.model import Trace

ALL_SATISFIED = "All constraints satisfied."


def as_trace(value: Trace | Mapping[str, Any] | Sequence[Any]) -> Trace:
    """A Trace from a Trace, a metrics record, records, or chat messages."""
    if isinstance(value, Trace):
        return value
    return trace_from_json(value, source="<input>")


@allow_deep
def verify_trace(
    trace_or_metrics: Trace | Mapping[str, Any] | Sequence[Any],
    spec: A.Spec | Sequence[A.Constraint] | str | os.PathLike[str],
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
) -> ComplianceReport:
    """Evaluate every constraint on the whole trace and compute ``C(τ, G_P)``.

    ``spec`` is a parsed spec, its constraints, a path to a ``.ltl`` file, or spec text.
    A constraint whose evaluation raises (a user predicate failing, an unregistered
    extractor) counts as violated and carries the error; the others are still scored.
    """
    if isinstance(spec, (str, os.PathLike)):
        spec = _spec_from(spec, registry)
    trace = as_trace(trace_or_metrics)
    constraints = spec.constraints if isinstance(spec, A.Spec) else tuple(spec)
    ev = Evaluator(trace, registry=registry, match=match)
    results = []
    for c in constraints:
        error: str | None = None
        try:
            passed = ev.holds(c.formula)
            detail = explain(c.formula, ev, passed)
        except AgentGuardError as exc:
            passed, error = False, str(exc)
            detail = f"Evaluation error: {exc}"
        except RecursionError:
            passed, error = False, "formula nested too deeply to evaluate"
            detail = f"Evaluation error: {error}"
        results.append(
            ConstraintResult(
                c.name, c.layer, c.weight, passed, detail, str(c.severity), c.message, error
            )
        )
    out = tuple(results)
    score = score_of(out)
    return ComplianceReport(
        compliance_score=score,
        compliance_label=label_of(score),
        details=_details(out, constraints, trace),
        tool_sequence=trace.names,
        constraints=out,
        spec_name=spec.name if isinstance(spec, A.Spec) else None,
        tool_problems=check_tool_use(trace, spec) if isinstance(spec, A.Spec) else (),
    )


def _spec_from(spec: str | os.PathLike[str], registry: Registry | None) -> A.Spec:
    from agentguard.language import load_spec, parse_spec

    if isinstance(spec, os.PathLike) or (
        "\n" not in spec and spec.strip().endswith(".ltl") and Path(spec).is_file()
    ):
        return load_spec(Path(spec), registry=registry)
    return parse_spec(spec, registry=registry)


def _details(
    results: tuple[ConstraintResult, ...], constraints: Sequence[A.Constraint], trace: Trace
) -> str:
    violated = [r.name for r in results if not r.passed]
    if not violated:
        return ALL_SATISFIED
    seen = set(trace.names)
    missing: list[str] = []
    for c in constraints:
        f = c.formula
        if isinstance(f, A.TracePredicate) and f.name in ("Called", "Before", "BranchCalled"):
            tools = f.args[:1] if f.name == "BranchCalled" else f.args[:2]
            for t in tools:
                if isinstance(t, str) and t not in seen and t not in missing:
                    missing.append(t)
    out = f"Violated: {violated}."
    if missing:
        out += f" Missing tools: {missing}."
    return out
