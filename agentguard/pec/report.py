"""Group scored episodes, compute metrics with intervals, and render them.

Groups are keyed by the ``--by`` labels (e.g. method, model). Bootstrap resamples
are paired within a dataset: when the episodes span several ``dataset`` labels the
dataset becomes the first part of every group key, and each dataset is resampled
on its own shared task ids.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentguard.pec.episode import Scored
from agentguard.pec.errors import PecError
from agentguard.pec.labels import LABEL_ORDER
from agentguard.pec.metrics import Summary, summarize
from agentguard.pec.stats import (
    GroupIntervals,
    Interval,
    percentile_intervals,
    resampled_statistics,
    wilson,
)
from agentguard.terminal import markup

GroupKey = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GroupReport:
    """Metrics of one group with bootstrap intervals and the Wilson interval of RR."""

    key: GroupKey
    summary: Summary
    intervals: GroupIntervals
    rr_interval: Interval | None
    baseline: GroupReport | None = None
    """The group this one is compared with (same dataset), when ``baseline`` was asked."""
    delta: GroupIntervals | None = None
    """Paired-bootstrap intervals of (this - baseline)."""

    def name(self) -> str:
        return " / ".join(self.key)

    def pec_interval(self, k: int) -> Interval | None:
        depths = self.intervals.depths
        return self.intervals.pec[depths.index(k)] if k in depths else None


@dataclass(frozen=True, slots=True)
class Report:
    by: tuple[str, ...]
    groups: tuple[GroupReport, ...]
    table_depths: tuple[int, ...]
    resamples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": list(self.by),
            "resamples": self.resamples,
            "seed": self.seed,
            "groups": [_group_dict(g, self.table_depths) for g in self.groups],
        }


def _iv(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def _group_dict(g: GroupReport, table_depths: Sequence[int]) -> dict[str, Any]:
    s, iv = g.summary, g.intervals
    return {
        "key": list(g.key),
        "n": s.n,
        "ter": s.ter,
        "ter_ci": _iv(iv.ter),
        "mean_fed": s.mean_fed,
        "mean_fed_ci": _iv(iv.mean_fed),
        "mean_horizon": s.mean_horizon,
        "auc_pec": s.auc_pec,
        "auc_pec_ci": _iv(iv.auc_pec),
        "rr_eligible": s.rr_eligible,
        "rr_successes": s.rr_successes,
        "rr": s.rr,
        "rr_ci": _iv(g.rr_interval),
        "final_success": s.final_success,
        "final_success_ci": _iv(iv.final_success),
        "decomposition": {
            "q": s.decomposition.q,
            "s": s.decomposition.s,
            "r": s.decomposition.r,
            "uninterrupted": s.decomposition.uninterrupted,
            "recovered": s.decomposition.recovered,
        },
        "pec_at": {
            str(k): {
                "pec": s.pec_at(k),
                "ci": _iv(g.pec_interval(k)),
                "n_k": s.n_k[k - 1] if k <= len(s.n_k) else 0,
                "pec_eligible": s.pec_eligible[k - 1] if k <= len(s.n_k) else None,
            }
            for k in table_depths
        },
        "pec_curve": list(s.pec),
        "labels": {label.value: count for label, count in s.labels},
        "unlabelled_failures": s.unlabelled,
        "vs_baseline": _delta_dict(g, table_depths),
    }


def _delta_dict(g: GroupReport, table_depths: Sequence[int]) -> dict[str, Any] | None:
    if g.baseline is None or g.delta is None:
        return None
    s, b, d = g.summary, g.baseline.summary, g.delta
    return {
        "baseline": list(g.baseline.key),
        "ter": s.ter - b.ter,
        "ter_ci": _iv(d.ter),
        "mean_fed": s.mean_fed - b.mean_fed,
        "mean_fed_ci": _iv(d.mean_fed),
        "auc_pec": s.auc_pec - b.auc_pec,
        "auc_pec_ci": _iv(d.auc_pec),
        "final_success": s.final_success - b.final_success,
        "final_success_ci": _iv(d.final_success),
        "pec_at": {
            str(k): {
                "delta": s.pec_at(k) - b.pec_at(k),
                "ci": _iv(d.pec[d.depths.index(k)]) if k in d.depths else None,
            }
            for k in table_depths
        },
    }


def group_key(scored: Scored, by: Sequence[str]) -> GroupKey:
    return tuple(scored.episode.label(b) for b in by)


def build_report(
    episodes: Sequence[Scored],
    by: Sequence[str] = ("method",),
    *,
    table_depths: Sequence[int] = (1, 2, 3, 4),
    resamples: int = 10_000,
    seed: int = 0,
    curve_depth: int = 30,
    baseline: str | None = None,
) -> Report:
    """Summaries and intervals per group (bootstrap paired per dataset).

    ``baseline`` names a group (its ``--by`` values joined by ``" / "``); every other
    group of the same dataset then also gets paired intervals of its difference.
    """
    if not episodes:
        raise PecError("no scored episodes: nothing to report")
    by = tuple(by)
    datasets = sorted({e.episode.label("dataset") for e in episodes})
    if len(datasets) > 1 and "dataset" not in by:
        by = ("dataset", *by)
    groups: dict[GroupKey, list[Scored]] = {}
    for e in episodes:
        groups.setdefault(group_key(e, by), []).append(e)
    longest = max(e.episode.horizon for e in episodes)
    depths = sorted(set(table_depths) | set(range(1, min(longest, curve_depth) + 1)))
    ks = tuple(depths)
    intervals: dict[GroupKey, GroupIntervals] = {}
    deltas: dict[GroupKey, tuple[GroupKey, GroupIntervals]] = {}
    found = baseline is None
    for dataset in datasets:
        mine = {k: v for k, v in groups.items() if v[0].episode.label("dataset") == dataset}
        stats = resampled_statistics(mine, depths=ks, resamples=resamples, seed=seed)
        intervals.update({k: percentile_intervals(v, ks) for k, v in stats.items()})
        base = next((k for k in mine if baseline in (_name(k), _name(k[1:]))), None)
        if base is None:
            continue
        found = True
        for k, v in stats.items():
            if k != base:
                deltas[k] = (base, percentile_intervals(v - stats[base], ks))
    if not found:
        names = ", ".join(_name(k) for k in sorted(groups))
        raise PecError(f"baseline {baseline!r} matches no group; groups: {names}")
    plain = {
        key: GroupReport(
            key,
            summarize(groups[key]),
            intervals[key],
            _rr_interval(groups[key]),
        )
        for key in sorted(groups)
    }
    out = []
    for key, report in plain.items():
        if key in deltas:
            base_key, delta = deltas[key]
            report = replace(report, baseline=plain[base_key], delta=delta)
        out.append(report)
    return Report(by, tuple(out), tuple(table_depths), resamples, seed)


def _name(key: GroupKey) -> str:
    return " / ".join(key)


def _rr_interval(episodes: Sequence[Scored]) -> Interval | None:
    failed = [e for e in episodes if not e.executable]
    return wilson(sum(e.episode.success for e in failed), len(failed))


# ---------------------------------------------------------------------- rendering
def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell(value: float | None, interval: Interval | None, digits: int = 2) -> str:
    if value is None:
        return "undefined"
    if interval is None:
        return _f(value, digits)
    return f"{value:.{digits}f} [{interval.low:.{digits}f},{interval.high:.{digits}f}]"


def main_table(report: Report) -> Table:
    """Shaped like the paper's Table 2."""
    table = Table(
        title=f"Prefix executability (95% CI: {report.resamples:,} paired task "
        "bootstrap resamples; RR: Wilson)"
    )
    for b in report.by:
        table.add_column(b.capitalize())
    for col in ("N", "TER", "Mean FED", "AUC-PEC", "RR-Eligible", "RR (s/n)", "Final success"):
        table.add_column(col, justify="right")
    for g in report.groups:
        s, iv = g.summary, g.intervals
        rr = _cell(s.rr, g.rr_interval) + f" ({s.rr_successes}/{s.rr_eligible})"
        table.add_row(
            *_shown(g.key),
            str(s.n),
            _cell(s.ter, iv.ter),
            _cell(s.mean_fed, iv.mean_fed),
            _cell(s.auc_pec, iv.auc_pec),
            str(s.rr_eligible),
            rr,
            _cell(s.final_success, iv.final_success),
        )
    return table


def pec_table(report: Report) -> Table:
    """Shaped like Table G.1: fixed-cohort PEC@k with intervals, and n_k."""
    table = Table(title="PEC@k (fixed cohort, Eq. 4); n_k = episodes with T >= k")
    for b in report.by:
        table.add_column(b.capitalize())
    for k in report.table_depths:
        table.add_column(f"PEC@{k}", justify="right")
    for g in report.groups:
        cells = []
        for k in report.table_depths:
            n_k = g.summary.n_k[k - 1] if k <= len(g.summary.n_k) else 0
            cells.append(f"{_cell(g.summary.pec_at(k), g.pec_interval(k))} n={n_k}")
        table.add_row(*_shown(g.key), *cells)
    return table


def label_table(report: Report) -> Table:
    """First-failure label counts (they sum to RR-Eligible when every failure is labelled)."""
    table = Table(title="First-failure labels")
    for b in report.by:
        table.add_column(b.capitalize())
    for label in LABEL_ORDER:
        table.add_column(label.value, justify="right")
    table.add_column("unlabelled", justify="right")
    table.add_column("RR-Eligible", justify="right")
    for g in report.groups:
        counts = [str(c) for _, c in g.summary.labels]
        table.add_row(
            *_shown(g.key), *counts, str(g.summary.unlabelled), str(g.summary.rr_eligible)
        )
    return table


def delta_table(report: Report) -> Table | None:
    """Paired differences against the baseline group (Table F.3 shape), if one was asked."""
    rows = [(g, g.baseline, g.delta) for g in report.groups]
    pairs = [(g, base, d) for g, base, d in rows if base is not None and d is not None]
    if not pairs:
        return None
    table = Table(title="Paired differences vs baseline (95% paired task bootstrap)")
    for label in report.by:
        table.add_column(label.capitalize())
    table.add_column("Baseline")
    for col in ("Δ TER", "Δ Mean FED", "Δ AUC-PEC", "Δ Final success"):
        table.add_column(col, justify="right")
    for g, base, d in pairs:
        s, ref = g.summary, base.summary
        table.add_row(
            *_shown(g.key),
            markup(base.name()),
            _signed(s.ter - ref.ter, d.ter),
            _signed(s.mean_fed - ref.mean_fed, d.mean_fed),
            _signed(s.auc_pec - ref.auc_pec, d.auc_pec),
            _signed(s.final_success - ref.final_success, d.final_success),
        )
    return table


def _shown(key: Sequence[str]) -> list[str]:
    """A group's key (labels from the user's files) as table cells: never interpreted."""
    return [markup(part) for part in key]


def _signed(value: float, interval: Interval) -> str:
    return f"{value:+.3f} [{interval.low:+.3f},{interval.high:+.3f}]"


def render(report: Report, console: Console) -> None:
    tables = (main_table(report), pec_table(report), label_table(report), delta_table(report))
    for table in tables:
        if table is not None:
            console.print(table)


CSV_COLUMNS = (
    "n",
    "ter",
    "ter_lo",
    "ter_hi",
    "mean_fed",
    "mean_fed_lo",
    "mean_fed_hi",
    "auc_pec",
    "auc_pec_lo",
    "auc_pec_hi",
    "rr_eligible",
    "rr_successes",
    "rr",
    "rr_lo",
    "rr_hi",
    "final_success",
    "final_success_lo",
    "final_success_hi",
)


def write_csv(report: Report, path: str | Path) -> None:
    """One row per group: the Table 2 columns with interval bounds, then PEC@k and labels."""
    header = [*report.by, *CSV_COLUMNS]
    for k in report.table_depths:
        header += [f"pec_{k}", f"pec_{k}_lo", f"pec_{k}_hi", f"n_{k}"]
    header += [f"label_{label.value}" for label in LABEL_ORDER]
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for g in report.groups:
            s, iv = g.summary, g.intervals
            row: list[Any] = [*g.key, s.n]
            for value, interval in (
                (s.ter, iv.ter),
                (s.mean_fed, iv.mean_fed),
                (s.auc_pec, iv.auc_pec),
            ):
                row += [value, interval.low, interval.high]
            rr_iv = g.rr_interval
            row += [
                s.rr_eligible,
                s.rr_successes,
                "" if s.rr is None else s.rr,
                "" if rr_iv is None else rr_iv.low,
                "" if rr_iv is None else rr_iv.high,
            ]
            row += [s.final_success, iv.final_success.low, iv.final_success.high]
            for k in report.table_depths:
                pk = g.pec_interval(k)
                row += [
                    s.pec_at(k),
                    "" if pk is None else pk.low,
                    "" if pk is None else pk.high,
                    s.n_k[k - 1] if k <= len(s.n_k) else 0,
                ]
            row += [c for _, c in s.labels]
            writer.writerow(row)


__all__ = [
    "GroupReport",
    "Report",
    "build_report",
    "delta_table",
    "group_key",
    "label_table",
    "main_table",
    "pec_table",
    "render",
    "write_csv",
]
