"""The aggregate table of a scored corpus: per-constraint pass rates, scores, labels.

Kept apart from the reports so the same table comes out of a serial run, a process
pool and a Ray Dataset: it is a pure function of the per-trace reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentguard.scoring.report import FULL, NONE, PARTIAL, ComplianceReport


@dataclass(frozen=True, slots=True)
class ConstraintRate:
    """How often one constraint held across the corpus."""

    name: str
    layer: str | None
    passed: int
    total: int

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 1.0


@dataclass(frozen=True, slots=True)
class CorpusSummary:
    """Traces scored, mean compliance score, label counts and per-constraint rates."""

    traces: int
    mean_score: float
    labels: tuple[tuple[str, int], ...]
    constraints: tuple[ConstraintRate, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "mean_score": self.mean_score,
            "labels": dict(self.labels),
            "constraints": [
                {"name": c.name, "layer": c.layer, "passed": c.passed, "total": c.total}
                for c in self.constraints
            ],
        }


def summarize(reports: Iterable[ComplianceReport]) -> CorpusSummary:
    """The aggregate table of ``reports`` (constraints in first-seen order)."""
    count = 0
    total_score = 0.0
    labels = {FULL: 0, PARTIAL: 0, NONE: 0}
    rates: dict[str, list[Any]] = {}
    for report in reports:
        count += 1
        total_score += report.score
        labels[report.label] = labels.get(report.label, 0) + 1
        for c in report.constraints:
            entry = rates.setdefault(c.name, [c.layer, 0, 0])
            entry[1] += int(c.passed)
            entry[2] += 1
    return CorpusSummary(
        traces=count,
        mean_score=round(total_score / count, 6) if count else 1.0,
        labels=tuple(labels.items()),
        constraints=tuple(
            ConstraintRate(name, layer, passed, total)
            for name, (layer, passed, total) in rates.items()
        ),
    )
