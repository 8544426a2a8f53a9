"""How ``agentguard check`` shows a scored batch on a terminal: per-trace tables for a
few traces, one row per trace for many, aggregates, pass rates per group, and a
progress bar while a long batch is scored.

``main.py`` owns the command's arguments and exit codes; the scoring and aggregation
live in :mod:`agentguard.report.batch`, shared with ``check --json`` and the HTML report.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import Final, TypeVar

from rich.console import Console
from rich.progress import track
from rich.table import Table

from agentguard.language.ast import Spec
from agentguard.report import batch
from agentguard.report.batch import CheckedTrace, Group, groups, stats
from agentguard.scoring.report import FULL, NONE, PARTIAL, ComplianceReport
from agentguard.terminal import markup

PROGRESS_THRESHOLD: Final = 20
"""Batches of at least this many records show a progress bar (when stderr is a terminal)."""

_COLOURS: Final = {FULL: "green", PARTIAL: "yellow", NONE: "red"}

T = TypeVar("T")


def with_progress(items: Sequence[T], description: str, err: Console | None) -> Iterable[T]:
    """``items``, through a transient progress bar when ``err`` is a terminal and the batch
    is long (a CI log or a pipe never gets control sequences)."""
    if err is None or len(items) < PROGRESS_THRESHOLD or not err.is_terminal:
        return items
    return track(items, description=description, console=err, transient=True)


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
        title=f"{markup(item.label)}  score [bold {colour}]{rep.score:.3f} {rep.label}[/]",
        title_justify="left",
    )
    for col in ("constraint", "layer", "weight", "result", "detail"):
        table.add_column(col, overflow="fold")
    for c in rep.constraints:
        mark = "[green]pass[/]" if c.passed else "[red]FAIL[/]"
        table.add_row(
            markup(c.name), markup(c.layer or "-"), f"{c.weight:g}", mark, markup(c.detail)
        )
    console.print(table)
    for problem in rep.tool_problems:
        console.print(f"[yellow]tool declaration[/] {markup(problem)}")
    console.print(f"tool sequence: {markup(elide(rep.tool_sequence))}\n")


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
            markup(item.label),
            f"{rep.score:.3f}",
            f"[{_COLOURS[rep.label]}]{rep.label}[/]",
            markup(", ".join([*(c.name for c in rep.violated), *_declarations(rep)]) or "-"),
        )
    console.print(runs)


def _declarations(rep: ComplianceReport) -> list[str]:
    """The tool declarations a trace's calls break, as the firewall names them."""
    return sorted({f"tool:{p.tool}:{p.kind}" for p in rep.tool_problems})


def _print_aggregates(console: Console, items: Sequence[CheckedTrace], spec: Spec) -> None:
    reports = [i.report for i in items if i.report is not None]
    unreadable = len(items) - len(reports)
    s = stats(reports, spec)
    if not s.traces:
        console.print(f"no trace scored; {unreadable} record(s) unreadable")
        return
    breaking = sum(1 for r in reports if r.tool_problems)
    console.print(
        f"{s.traces} trace(s): mean score {s.mean_score:.3f}; "
        f"FULL {s.labels[FULL]}, PARTIAL {s.labels[PARTIAL]}, NONE {s.labels[NONE]}"
        + (f"; {breaking} break a tool declaration" if breaking else "")
        + (f"; {unreadable} record(s) unreadable" if unreadable else "")
    )
    rates = Table(title="pass rate per constraint", title_justify="left")
    for col in ("constraint", "layer", "passed", "rate"):
        rates.add_column(col)
    for name, layer, _, ok in s.constraints:
        rates.add_row(
            markup(name), markup(layer or "-"), f"{ok}/{s.traces}", f"{ok / s.traces:.1%}"
        )
    console.print(rates)


def _print_groups(console: Console, found: Sequence[Group], by: Sequence[str]) -> None:
    table = Table(title=f"pass rate by {' / '.join(by)}", title_justify="left")
    for col in (" / ".join(by), "traces", "passed", "pass rate", "mean score", "most violated"):
        table.add_column(col, overflow="fold")
    for g in found:
        s = g.stats
        worst = sorted((ok, name) for name, _, _, ok in s.constraints if ok < s.traces)
        table.add_row(
            markup(g.name),
            str(s.traces),
            str(s.passed),
            f"{s.pass_rate:.1%}" if s.pass_rate is not None else "-",
            f"{s.mean_score:.3f}" if s.mean_score is not None else "-",
            markup(", ".join(name for _, name in worst[:3]) or "-"),
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


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def score_batch(args: argparse.Namespace, spec: Spec, err: Console) -> list[CheckedTrace]:
    """Read and score ``args.traces`` as ``check`` and ``report`` both do: every record,
    ``--by`` fields checked first, batched (``--jobs``), a progress bar on a terminal."""
    loaded = batch.read_files(args.traces, format=args.format, final_answer=args.final_answer)
    batch.check_fields(loaded, args.by)
    return batch.score_records(
        with_progress(loaded, "scoring", err),
        spec,
        jobs=args.jobs,
        spec_source=args.spec,
        plugins=args.load,
    )


def batch_failed(items: Sequence[CheckedTrace], fail_under: float | None) -> bool:
    """Exit 1? The mean below ``--fail-under`` when given, else any trace that violates a
    constraint or breaks a ``tool`` declaration (a call the firewall would have refused:
    declarations carry no weight, so the score alone would not show it)."""
    if fail_under is not None:
        return batch.below(items, fail_under)
    return any(
        i.report is not None and (not i.report.passed or bool(i.report.tool_problems))
        for i in items
    )


LOAD_HELP = (
    "import MODULE first (it registers the spec's predicates and extractors): a module "
    "name (found from the current directory too) or a .py file; repeatable"
)


def add_load_option(parser: argparse.ArgumentParser) -> None:
    """``--load MODULE`` (repeatable): every command that reads a spec takes it alike."""
    parser.add_argument("--load", action="append", default=[], metavar="MODULE", help=LOAD_HELP)


def add_scale_options(parser: argparse.ArgumentParser) -> None:
    """``--by``, ``--fail-under`` and ``--jobs`` (shared by ``check`` and ``report``)."""
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
    parser.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="N",
        help="score on N worker processes (same reports as serial; default 1)",
    )


__all__ = [
    "PROGRESS_THRESHOLD",
    "add_scale_options",
    "batch_failed",
    "elide",
    "render",
    "score_batch",
    "score_threshold",
    "with_progress",
]
