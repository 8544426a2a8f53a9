"""Score many traces against one spec: ``verify_traces``.

Scoring a corpus of short traces one by one spends most of its time on Python dispatch
over every formula node, per trace. Here the spec is compiled once, and the constraints
in the temporal fragment (event atoms whose tests compare against constants, boolean
connectives, future and past operators) are scored for all traces at once
(:mod:`agentguard.scoring.bulk`), reading only the tool names unless an atom tests a
call's arguments, result or outcome. A constraint outside the fragment (trace
predicates, quantifiers, comparisons, user predicates, metrics), or one whose bulk
evaluation raises, is scored per trace by the ordinary evaluator. Every report equals
what ``verify_trace`` returns for that trace, field for field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from agentguard._recursion import allow_deep
from agentguard.language import ast as A
from agentguard.language.dialogue import judged, spec_mentions_dialogue
from agentguard.scoring.builders import compliance_report
from agentguard.scoring.bulk import Bulk
from agentguard.scoring.report import ComplianceReport, ConstraintResult, label_of, score_of
from agentguard.scoring.verify import (
    _spec_from,
    as_trace,
    assemble_report,
    constraint_result,
    details_of,
    missing_tool_candidates,
    verify_trace,
)
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.provenance import lower_spec
from agentguard.semantics.registry import Matcher, Registry
from agentguard.semantics.vectors import BoolVec
from agentguard.trace.model import Trace

_PASSED = attrgetter("passed")
TraceLike = Trace | Mapping[str, Any] | Sequence[Any]


@allow_deep
def verify_traces(
    traces: Iterable[TraceLike],
    spec: A.Spec | Sequence[A.Constraint] | str | os.PathLike[str],
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
) -> list[ComplianceReport]:
    """``[verify_trace(t, spec) for t in traces]``, computed in bulk.

    ``traces`` holds anything ``verify_trace`` accepts (traces, metrics records, call
    records, chat messages); ``spec`` is a parsed spec, its constraints, a ``.ltl`` path
    or spec text, compiled once for the whole batch.
    """
    if isinstance(spec, (str, os.PathLike)):
        spec = _spec_from(spec, registry)
    dialogue = spec_mentions_dialogue(spec)  # as verify_trace: messages only if named
    loaded = [judged(as_trace(t), dialogue) for t in traces]
    lowered, plan = lower_spec(spec)  # `from` tests read each call's view, as verify_trace
    constraints = lowered.constraints if isinstance(lowered, A.Spec) else lowered
    if plan is not None:
        return [verify_trace(t, spec, registry=registry, match=match) for t in loaded]
    names = [t.names for t in loaded]  # read from the columns: no Call is built for this
    bulk = Bulk(loaded, names)
    fallback: dict[int, Evaluator] = {}

    def evaluator(t: int) -> Evaluator:
        ev = fallback.get(t)
        if ev is None:
            ev = fallback[t] = Evaluator(loaded[t], registry=registry, match=match)
        return ev

    columns: list[list[ConstraintResult]] = []
    for c in constraints:
        scored = bulk.score(c)
        if scored is None:
            columns.append([constraint_result(c, evaluator(t)) for t in range(len(loaded))])
        elif len(bulk.rows) == len(loaded):
            columns.append(scored)
        else:  # empty traces keep the evaluator's own rules
            column: list[ConstraintResult | None] = [None] * len(loaded)
            for t, result in zip(bulk.rows, scored, strict=True):
                column[t] = result
            columns.append(
                [
                    r if r is not None else constraint_result(c, evaluator(t))
                    for t, r in enumerate(column)
                ]
            )
    candidates = missing_tool_candidates(constraints)
    return _reports(columns, spec, loaded, names, candidates, _called(bulk, candidates))


def _called(bulk: Bulk, tools: tuple[str, ...]) -> list[BoolVec]:
    """Per tool, whether each trace calls it (from the bulk's tool positions)."""
    out = []
    for tool in tools:
        calls = bulk.tools.of(bulk.code_of(tool))
        called = np.zeros(len(bulk.traces), dtype=bool)
        called[bulk.rows] = calls.hi > calls.lo
        out.append(called)
    return out


def _reports(
    columns: list[list[ConstraintResult]],
    spec: A.Spec | Sequence[A.Constraint],
    traces: list[Trace],
    names: list[tuple[str, ...]],
    candidates: tuple[str, ...],
    called: list[BoolVec],
) -> list[ComplianceReport]:
    """One report per trace; traces with the same outcomes share their score and details
    (which depend only on which constraints passed, and on which of the ``candidates``
    (the tools the details may name as missing) were called: ``called``, per candidate)."""
    rows: list[tuple[ConstraintResult, ...]] = (
        list(zip(*columns, strict=True)) if columns else [()] * len(traces)
    )
    if isinstance(spec, A.Spec) and spec.tools:  # per-trace tool-use checks
        return [
            assemble_report(row, spec, traces[t], names[t], candidates)
            for t, row in enumerate(rows)
        ]
    # what assemble_report builds, its score and details computed once per outcome: the
    # passed flags of each trace and the candidates it called, as bits of one integer,
    # pick the outcome
    spec_name = spec.name if isinstance(spec, A.Spec) else None
    n = len(traces)
    bits = [np.fromiter(map(_PASSED, column), dtype=bool, count=n) for column in columns]
    bits += called
    key = np.zeros(n, dtype=object if len(bits) > 62 else np.int64)
    for bit, flags in enumerate(bits):
        key += flags.astype(key.dtype) << bit
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    summaries: list[tuple[float, str, str]] = []
    for t in first.tolist():
        score = score_of(rows[t])
        summaries.append((score, label_of(score), details_of(rows[t], candidates, names[t])))
    out = []
    for k, sequence, row in zip(inverse.tolist(), names, rows, strict=True):
        score, label, details = summaries[k]
        out.append(compliance_report(score, label, details, sequence, row, spec_name, ()))
    return out
