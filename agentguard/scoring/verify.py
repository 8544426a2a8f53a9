"""Score a completed trace against a spec: ``verify_trace``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from agentguard._recursion import allow_deep
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.dialogue import judged, spec_mentions_dialogue
from agentguard.scoring.inputs import coerce_spec, coerce_trace
from agentguard.scoring.report import ComplianceReport, ConstraintResult, label_of, score_of
from agentguard.scoring.tool_use import check_tool_use
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.explain import explain
from agentguard.semantics.provenance import lower_spec
from agentguard.semantics.provenance_index import annotate_trace
from agentguard.semantics.registry import Matcher, Registry
from agentguard.trace.model import Trace

ALL_SATISFIED = "All constraints satisfied."


as_trace = coerce_trace  # the older name, kept for its importers


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
    A trace's dialogue events (user and assistant messages) are seen only by a spec that
    names one (``user_message``, ``assistant_message``); other specs judge its tool calls.
    """
    if isinstance(spec, (str, os.PathLike)):
        spec = _spec_from(spec, registry)
    # dialogue events are judged only by a spec that names one (agentguard/language/dialogue.py)
    trace = judged(as_trace(trace_or_metrics), spec_mentions_dialogue(spec))
    lowered, plan = lower_spec(spec)
    constraints = lowered.constraints if isinstance(lowered, A.Spec) else lowered
    # `from` tests and decoded results are read from each call's view (semantics/provenance.py)
    views = annotate_trace(plan, trace) if plan is not None else trace
    ev = Evaluator(views, registry=registry, match=match)
    results = tuple(constraint_result(c, ev) for c in constraints)
    return assemble_report(results, spec, trace, trace.names)


def constraint_result(c: A.Constraint, ev: Evaluator) -> ConstraintResult:
    """One constraint scored on the evaluator's trace; an evaluation error violates it."""
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
    return ConstraintResult(
        c.name, c.layer, c.weight, passed, detail, str(c.severity), c.message, error
    )


def assemble_report(
    results: tuple[ConstraintResult, ...],
    spec: A.Spec | Sequence[A.Constraint],
    trace: Trace,
    names: tuple[str, ...],
    candidates: tuple[str, ...] | None = None,
    summary: tuple[float, str] | None = None,
) -> ComplianceReport:
    """The report of ``results`` on ``trace`` (``names`` is its tool sequence).

    When many traces are scored against one spec, ``candidates`` (from
    :func:`missing_tool_candidates`) and ``summary`` (the score and details, shared by
    traces with the same outcomes) can be passed in instead of recomputed per trace.
    """
    if summary is None:
        if candidates is None:
            constraints = spec.constraints if isinstance(spec, A.Spec) else tuple(spec)
            candidates = missing_tool_candidates(constraints)
        summary = score_of(results), details_of(results, candidates, names)
    score, details = summary
    return ComplianceReport(
        compliance_score=score,
        compliance_label=label_of(score),
        details=details,
        tool_sequence=names,
        constraints=results,
        spec_name=spec.name if isinstance(spec, A.Spec) else None,
        tool_problems=check_tool_use(trace, spec) if isinstance(spec, A.Spec) else (),
    )


def _spec_from(spec: str | os.PathLike[str], registry: Registry | None) -> A.Spec:
    return coerce_spec(spec, registry)


def missing_tool_candidates(constraints: Sequence[A.Constraint]) -> tuple[str, ...]:
    """Tools whose absence the report's details name (from Called, Before, BranchCalled)."""
    out: list[str] = []
    for c in constraints:
        f = c.formula
        if isinstance(f, A.TracePredicate) and f.name in ("Called", "Before", "BranchCalled"):
            tools = f.args[:1] if f.name == "BranchCalled" else f.args[:2]
            for t in tools:
                if isinstance(t, str) and t not in out:
                    out.append(t)
    return tuple(out)


def details_of(
    results: tuple[ConstraintResult, ...], candidates: tuple[str, ...], names: tuple[str, ...]
) -> str:
    """The report's one-line summary: violated constraints, then tools never called."""
    violated = [r.name for r in results if not r.passed]
    if not violated:
        return ALL_SATISFIED
    seen = set(names) if candidates else set()
    missing = [t for t in candidates if t not in seen]
    out = f"Violated: {violated}."
    if missing:
        out += f" Missing tools: {missing}."
    return out
