"""``agentguard check`` at the scale of a paper: scoring many traces, grouping them, and
printing the result as tables or as one JSON document of a fixed shape.

``main.py`` owns the command's arguments and exit codes; this module owns what the
command computes from the loaded records and how it shows it, so that the report
renderer (``agentguard report``) reuses the same scored records and group-by rule.

The JSON document (``check --json``; schema in docs/traces.md) has the same keys for
one trace and for a thousand: ``spec``, ``traces`` (one item per record, good or bad),
``summary``, ``by``, ``groups`` and ``fail_under``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final, TypeVar

from rich.console import Console
from rich.progress import track
from rich.table import Table

from agentguard.errors import AgentGuardError, TraceError
from agentguard.language.ast import Spec
from agentguard.scoring import verify_trace
from agentguard.scoring.report import FULL, NONE, PARTIAL, ComplianceReport
from agentguard.trace.loaders import LoadedTrace, iter_trace_file

SCHEMA: Final = "agentguard.check/1"
"""The ``schema`` value of ``check --json`` documents (bumped when a key changes)."""

PROGRESS_THRESHOLD: Final = 20
"""Batches of at least this many records show a progress bar (when stderr is a terminal)."""

MISSING: Final = "-"
"""The group value of a trace that lacks the ``--by`` field."""

_COLOURS: Final = {FULL: "green", PARTIAL: "yellow", NONE: "red"}
_BUILTIN_FIELDS: Final = ("label", "file", "format")

T = TypeVar("T")


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
        }


def read_files(
    paths: Sequence[str], *, format: str | None = None, final_answer: bool = True
) -> list[LoadedTrace | CheckedTrace]:
    """Every record of every file, in order; a file that cannot be read at all, or holds
    no record, is one :class:`CheckedTrace` carrying the error (never a silent success)."""
    out: list[LoadedTrace | CheckedTrace] = []
    for path in paths:
        try:
            records = list(iter_trace_file(path, format=format, final_answer=final_answer))
        except TraceError as exc:
            out.append(CheckedTrace.unreadable_file(path, str(exc)))
            continue
        if not records:
            out.append(CheckedTrace.unreadable_file(path, f"{path}: no trace records in the file"))
        out.extend(records)
    return out


def score_records(
    records: Sequence[LoadedTrace | CheckedTrace], spec: Spec, *, err: Console | None = None
) -> list[CheckedTrace]:
    """Score every readable record (a progress bar on ``err`` for long batches)."""
    out = []
    for rec in with_progress(records, "scoring", err):
        if isinstance(rec, CheckedTrace):
            out.append(rec)
            continue
        if rec.error is not None or rec.trace is None:
            out.append(
                CheckedTrace(rec.source, rec.record, rec.label, None, None, str(rec.error), rec)
            )
            continue
        report = verify_trace(rec.trace, spec)
        out.append(CheckedTrace(rec.source, rec.record, rec.label, rec.format, report, None, rec))
    return out


def with_progress(items: Sequence[T], description: str, err: Console | None) -> Iterable[T]:
    """``items``, through a transient progress bar when ``err`` is a terminal and the batch
    is long (a CI log or a pipe never gets control sequences)."""
    if err is None or len(items) < PROGRESS_THRESHOLD or not err.is_terminal:
        return items
    return track(items, description=description, console=err, transient=True)


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


def check_fields(items: Sequence[CheckedTrace], by: Sequence[str]) -> None:
    """Raise :class:`GroupFieldError` for a ``--by`` field that no scored trace has."""
    scored = [i for i in items if i.report is not None]
    for name in by:
        if name in _BUILTIN_FIELDS or not scored:
            continue
        if all(field_value(i, name) == MISSING for i in scored):
            known = sorted(set(_BUILTIN_FIELDS) | _fields_seen(scored))
            raise GroupFieldError(
                f"--by {name}: no trace has this field; fields present: {', '.join(known)}"
            )


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


# ------------------------------------------------------------------ tables
def render(
    console: Console,
    items: Sequence[CheckedTrace],
    spec: Spec,
    *,
    detail_limit: int,
    summary_only: bool = False,
    by: Sequence[str] = (),
) -> None:
    """Per-trace tables (few traces), one row per trace (many), or only the aggregates."""
    scored = [i for i in items if i.report is not None]
    if summary_only:
        _print_aggregates(console, items, spec)
    elif len(scored) > detail_limit:
        _print_rows(console, scored)
        _print_aggregates(console, items, spec)
    else:
        for item in scored:
            _print_detail(console, item)
    if by:
        _print_groups(console, groups(items, by, spec), by)


def _print_detail(console: Console, item: CheckedTrace) -> None:
    rep = item.report
    if rep is None:  # pragma: no cover - only scored items are detailed
        return
    colour = _COLOURS[rep.label]
    table = Table(
        title=f"{item.label}  score [bold {colour}]{rep.score:.3f} {rep.label}[/]",
        title_justify="left",
    )
    for col in ("constraint", "layer", "weight", "result", "detail"):
        table.add_column(col, overflow="fold")
    for c in rep.constraints:
        mark = "[green]pass[/]" if c.passed else "[red]FAIL[/]"
        table.add_row(c.name, c.layer or "-", f"{c.weight:g}", mark, c.detail)
    console.print(table)
    for problem in rep.tool_problems:
        console.print(f"[yellow]tool declaration[/] {problem}")
    console.print(f"tool sequence: {elide(rep.tool_sequence)}\n")


def elide(names: tuple[str, ...], head: int = 30, tail: int = 10) -> str:
    """The tool sequence, elided in the middle when long (a 10k-call run fits one line)."""
    if not names:
        return "(empty)"
    if len(names) <= head + tail:
        return " -> ".join(names)
    skipped = len(names) - head - tail
    return (
        " -> ".join(names[:head]) + f" -> ... ({skipped} more) ... -> " + " -> ".join(names[-tail:])
    )


def _print_rows(console: Console, scored: Sequence[CheckedTrace]) -> None:
    runs = Table(
        title=f"{len(scored)} trace{'s' if len(scored) != 1 else ''}", title_justify="left"
    )
    for col in ("trace", "score", "label", "violated"):
        runs.add_column(col, overflow="fold")
    for item in scored:
        rep = item.report
        if rep is None:  # pragma: no cover - filtered by the caller
            continue
        runs.add_row(
            item.label,
            f"{rep.score:.3f}",
            f"[{_COLOURS[rep.label]}]{rep.label}[/]",
            ", ".join(c.name for c in rep.violated) or "-",
        )
    console.print(runs)


def _print_aggregates(console: Console, items: Sequence[CheckedTrace], spec: Spec) -> None:
    reports = [i.report for i in items if i.report is not None]
    unreadable = len(items) - len(reports)
    s = stats(reports, spec)
    if not s.traces:
        console.print(f"no trace scored; {unreadable} record(s) unreadable")
        return
    console.print(
        f"{s.traces} trace(s): mean score {s.mean_score:.3f}; "
        f"FULL {s.labels[FULL]}, PARTIAL {s.labels[PARTIAL]}, NONE {s.labels[NONE]}"
        + (f"; {unreadable} record(s) unreadable" if unreadable else "")
    )
    rates = Table(title="pass rate per constraint", title_justify="left")
    for col in ("constraint", "layer", "passed", "rate"):
        rates.add_column(col)
    for name, layer, _, ok in s.constraints:
        rates.add_row(name, layer or "-", f"{ok}/{s.traces}", f"{ok / s.traces:.1%}")
    console.print(rates)


def _print_groups(console: Console, found: Sequence[Group], by: Sequence[str]) -> None:
    table = Table(title=f"pass rate by {' / '.join(by)}", title_justify="left")
    for col in (" / ".join(by), "traces", "passed", "pass rate", "mean score", "most violated"):
        table.add_column(col, overflow="fold")
    for g in found:
        s = g.stats
        worst = sorted((ok, name) for name, _, _, ok in s.constraints if ok < s.traces)
        table.add_row(
            g.name,
            str(s.traces),
            str(s.passed),
            f"{s.pass_rate:.1%}" if s.pass_rate is not None else "-",
            f"{s.mean_score:.3f}" if s.mean_score is not None else "-",
            ", ".join(name for _, name in worst[:3]) or "-",
        )
    console.print(table)


# ------------------------------------------------------------------ arguments
def score_threshold(text: str) -> float:
    """``--fail-under``: a compliance score in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a score in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a score in [0, 1], got {value:g}")
    return value


def add_scale_options(parser: argparse.ArgumentParser) -> None:
    """``--by``, ``--summary`` and ``--fail-under`` (shared by ``check`` and ``report``)."""
    parser.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="FIELD",
        help="pass rates per group of this field: label, file, format, or any metric / "
        "metadata field of the traces (a.b for nested ones); repeatable",
    )
    parser.add_argument(
        "--fail-under",
        type=score_threshold,
        default=None,
        metavar="SCORE",
        help="exit 1 only when the mean compliance score is below SCORE (for CI), "
        "instead of on any violation",
    )


__all__ = [
    "MISSING",
    "PROGRESS_THRESHOLD",
    "SCHEMA",
    "CheckedTrace",
    "Group",
    "GroupFieldError",
    "Stats",
    "add_scale_options",
    "below",
    "check_fields",
    "document",
    "elide",
    "field_value",
    "group_name",
    "groups",
    "read_files",
    "render",
    "score_records",
    "stats",
    "with_progress",
]
