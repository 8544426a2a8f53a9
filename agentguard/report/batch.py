"""Scoring a batch of trace records and aggregating it: the data behind ``check`` and the
HTML report.

Each record becomes a :class:`CheckedTrace` (its compliance report, or the error that
kept it from being read). Aggregates (:class:`Stats`) and groups (``--by FIELD``) are
computed here once, so the terminal tables, ``check --json`` and the HTML report agree.
The ``check --json`` document (:func:`document`, schema in docs/traces.md) has the same
keys for one trace and for a thousand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final

from agentguard.errors import AgentGuardError, TraceError
from agentguard.language.ast import Spec
from agentguard.language.reads import reads_results
from agentguard.scoring import verify_traces
from agentguard.scoring.report import FULL, NONE, PARTIAL, ComplianceReport
from agentguard.trace.loaders import LoadedTrace, iter_trace_file
from agentguard.trace.model import Trace

SCHEMA: Final = "agentguard.check/1"
"""The ``schema`` value of ``check --json`` documents (bumped when a key changes)."""

MISSING: Final = "-"
"""The group value of a trace that lacks the ``--by`` field."""

BUILTIN_FIELDS: Final = ("label", "file", "format")
"""``--by`` fields every record has."""


class GroupFieldError(AgentGuardError, ValueError):
    """``--by FIELD`` names a field that no trace has."""


@dataclass(frozen=True, slots=True)
class CheckedTrace:
    """One record of a check run: its report, or why it could not be read.

    ``loaded`` is None when the whole file could not be read (then ``record`` is None).
    """

    source: str
    record: int | None
    label: str
    format: str | None
    report: ComplianceReport | None
    error: str | None
    loaded: LoadedTrace | None = None
    unjudged: tuple[str, ...] = ()
    """Constraints that test results, when the trace (a decision log written under
    redaction) keeps only digests of them: their verdicts cannot be trusted."""

    @classmethod
    def unreadable_file(cls, source: str, error: str) -> CheckedTrace:
        return cls(source, None, source, None, None, error)

    def to_dict(self, *, extended: bool = False) -> dict[str, Any]:
        return {
            "source": self.source,
            "record": self.record,
            "label": self.label,
            "format": self.format,
            "error": self.error,
            "report": None if self.report is None else self.report.to_dict(extended=extended),
            "unjudged": list(self.unjudged),
        }


def read_files(
    paths: Sequence[str], *, format: str | None = None, final_answer: bool = True
) -> list[LoadedTrace | CheckedTrace]:
    """Every record of every file, in order; a file that cannot be read at all, or holds
    no record, is one :class:`CheckedTrace` carrying the error (never a silent success)."""
    out: list[LoadedTrace | CheckedTrace] = []
    for path in paths:
        try:
            # messages kept: each spec judges them or not, reports show them inline
            records = list(
                iter_trace_file(path, format=format, final_answer=final_answer, messages=True)
            )
        except TraceError as exc:
            out.append(CheckedTrace.unreadable_file(path, str(exc)))
            continue
        if not records:
            out.append(CheckedTrace.unreadable_file(path, f"{path}: no trace records in the file"))
        out.extend(records)
    return out


def score_records(
    records: Iterable[LoadedTrace | CheckedTrace],
    spec: Spec,
    *,
    jobs: int = 1,
    spec_source: str | None = None,
    plugins: Sequence[str] = (),
    chunk: int = 256,
) -> list[CheckedTrace]:
    """Score every readable record; unreadable ones pass through with their error.

    Readable traces are scored in batches with :func:`~agentguard.scoring.verify_traces`
    (compiled once, evaluated in bulk), ``chunk`` records at a time so that a progress
    wrapper around ``records`` still advances. With ``jobs > 1`` they are scored on that
    many processes (:mod:`agentguard.scale.pool`); each worker loads ``spec_source`` (the
    ``.ltl`` path, after importing ``plugins``) itself. The reports are the same either way.
    """
    out: list[CheckedTrace] = []
    pending: list[LoadedTrace] = []

    def flush() -> None:
        traces = [rec.trace for rec in pending if rec.trace is not None]
        if jobs > 1:
            from agentguard.scale.pool import verify_traces_parallel

            reports = verify_traces_parallel(
                traces, spec_source or spec, jobs=jobs, plugins=plugins
            )
        else:
            reports = verify_traces(traces, spec)
        for rec, report in zip(pending, reports, strict=True):
            blind = unjudged_constraints(spec, rec.trace) if rec.trace is not None else ()
            out.append(
                CheckedTrace(
                    rec.source, rec.record, rec.label, rec.format, report, None, rec, blind
                )
            )
        pending.clear()

    for rec in records:
        if isinstance(rec, CheckedTrace):
            flush()
            out.append(rec)
            continue
        if rec.error is not None or rec.trace is None:
            flush()
            out.append(
                CheckedTrace(rec.source, rec.record, rec.label, None, None, str(rec.error), rec)
            )
            continue
        pending.append(rec)
        if jobs <= 1 and len(pending) >= chunk:
            flush()
    flush()
    return out


def unjudged_constraints(spec: Spec, trace: Trace) -> tuple[str, ...]:
    """Constraints that test results, when ``trace``'s results were redacted.

    A decision log written under redaction keeps a digest of each result, not the value
    (``metrics.redacted_results`` lists the positions); a verdict on a result test there
    would be a verdict on the digest.
    """
    if not trace.metrics.get("redacted_results"):
        return ()
    return tuple(c.name for c in spec.constraints if reads_results(c.formula))


def unjudged_message(item: CheckedTrace) -> str:
    """The warning ``check`` prints for a trace with unjudged constraints."""
    redacted = []
    if item.loaded is not None and item.loaded.trace is not None:
        redacted = list(item.loaded.trace.metrics.get("redacted_results", ()))
    return (
        f"{item.source}: the log keeps only digests of the results at positions {redacted} "
        "(written under redaction), so these constraints, which test results, cannot be "
        f"judged from it: {', '.join(item.unjudged)}"
    )


# ------------------------------------------------------------------ grouping
def field_value(item: CheckedTrace, name: str) -> Any:
    """The value of ``--by`` field ``name`` on a record (:data:`MISSING` when absent).

    ``label`` (task id and trial when the format has them, else ``file:line``), ``file``
    and ``format`` always exist; any other name is looked up on the loaded record's own
    fields, then in the trace's metrics record (``a.b`` walks into nested objects).
    """
    if name == "label":
        return item.label
    if name == "file":
        return item.source
    if name == "format":
        return item.format or MISSING
    loaded = item.loaded
    if loaded is None:
        return MISSING
    if name in _record_fields(loaded):
        own = getattr(loaded, name)
        return MISSING if own is None else own
    if loaded.trace is None:
        return MISSING
    value: Any = loaded.trace.metrics
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def _record_fields(loaded: LoadedTrace) -> frozenset[str]:
    return frozenset(f.name for f in fields(loaded)) - {"trace", "error", "source", "record"}


def group_name(value: Any) -> str:
    """A group value as text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def check_fields(records: Sequence[LoadedTrace | CheckedTrace], by: Sequence[str]) -> None:
    """Raise :class:`GroupFieldError` for a ``--by`` field that no readable trace has.

    Takes the loaded records, so a misspelt field fails before a long batch is scored.
    """
    items = (r if isinstance(r, CheckedTrace) else _unscored(r) for r in records)
    readable = [i for i in items if i.loaded is not None and i.loaded.trace is not None]
    for name in by:
        if name in BUILTIN_FIELDS or not readable:
            continue
        if all(field_value(i, name) == MISSING for i in readable):
            known = sorted(set(BUILTIN_FIELDS) | _fields_seen(readable))
            raise GroupFieldError(
                f"--by {name}: no trace has this field; fields present: {', '.join(known)}"
            )


def _unscored(rec: LoadedTrace) -> CheckedTrace:
    return CheckedTrace(rec.source, rec.record, rec.label, rec.format, None, None, rec)


def _fields_seen(items: Sequence[CheckedTrace]) -> set[str]:
    seen: set[str] = set()
    for i in items:
        if i.loaded is not None:
            seen |= {f for f in _record_fields(i.loaded) if getattr(i.loaded, f) is not None}
            if i.loaded.trace is not None:
                seen |= set(map(str, i.loaded.trace.metrics))
    return seen


@dataclass(frozen=True, slots=True)
class Stats:
    """Aggregates over a set of scored traces (all of them, or one group)."""

    traces: int
    passed: int
    mean_score: float | None
    labels: Mapping[str, int]
    constraints: tuple[tuple[str, str | None, float, int], ...]
    """(name, layer, weight, traces passing it), in spec order."""

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.traces if self.traces else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "mean_score": self.mean_score,
            "labels": dict(self.labels),
            "constraints": [
                {
                    "name": name,
                    "layer": layer,
                    "weight": weight,
                    "passed": ok,
                    "rate": ok / self.traces if self.traces else None,
                }
                for name, layer, weight, ok in self.constraints
            ],
        }


def stats(reports: Sequence[ComplianceReport], spec: Spec) -> Stats:
    n = len(reports)
    passing = {c.name: 0 for c in spec.constraints}
    for r in reports:
        for c in r.constraints:
            passing[c.name] = passing.get(c.name, 0) + int(c.passed)
    return Stats(
        traces=n,
        passed=sum(r.passed for r in reports),
        mean_score=round(sum(r.score for r in reports) / n, 6) if n else None,
        labels={label: sum(r.label == label for r in reports) for label in (FULL, PARTIAL, NONE)},
        constraints=tuple((c.name, c.layer, c.weight, passing[c.name]) for c in spec.constraints),
    )


@dataclass(frozen=True, slots=True)
class Group:
    key: tuple[str, ...]
    stats: Stats

    @property
    def name(self) -> str:
        return " / ".join(self.key)


def groups(items: Sequence[CheckedTrace], by: Sequence[str], spec: Spec) -> list[Group]:
    """Scored traces grouped by the ``by`` fields, groups in sorted order."""
    if not by:
        return []
    buckets: dict[tuple[str, ...], list[ComplianceReport]] = {}
    for i in items:
        if i.report is not None:
            key = tuple(group_name(field_value(i, name)) for name in by)
            buckets.setdefault(key, []).append(i.report)
    return [Group(key, stats(buckets[key], spec)) for key in sorted(buckets)]


# ------------------------------------------------------------------ JSON
def document(
    items: Sequence[CheckedTrace],
    spec: Spec,
    *,
    by: Sequence[str] = (),
    fail_under: float | None = None,
    extended: bool = False,
) -> dict[str, Any]:
    """The ``check --json`` document: the same keys whatever the number of traces."""
    reports = [i.report for i in items if i.report is not None]
    summary = stats(reports, spec).to_dict()
    summary["records"] = len(items)
    summary["unreadable"] = len(items) - len(reports)
    return {
        "schema": SCHEMA,
        "spec": spec.name,
        "traces": [i.to_dict(extended=extended) for i in items],
        "summary": summary,
        "by": list(by),
        "groups": [
            {"key": dict(zip(by, g.key, strict=True)), "name": g.name, **g.stats.to_dict()}
            for g in groups(items, by, spec)
        ],
        "fail_under": fail_under,
    }


def below(items: Sequence[CheckedTrace], threshold: float) -> bool:
    """Whether the mean compliance score of the scored traces is under ``threshold``."""
    scores = [i.report.score for i in items if i.report is not None]
    return bool(scores) and sum(scores) / len(scores) < threshold


__all__ = [
    "BUILTIN_FIELDS",
    "MISSING",
    "SCHEMA",
    "CheckedTrace",
    "Group",
    "GroupFieldError",
    "Stats",
    "below",
    "check_fields",
    "document",
    "field_value",
    "group_name",
    "groups",
    "read_files",
    "score_records",
    "stats",
]
