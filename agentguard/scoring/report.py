"""The compliance report of Definition 1, in the Appendix B JSON shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FULL, PARTIAL, NONE = "FULL", "PARTIAL", "NONE"


@dataclass(frozen=True, slots=True)
class ConstraintResult:
    """One constraint's outcome on one trace."""

    name: str
    layer: str | None
    weight: float
    passed: bool
    detail: str
    severity: str = "SOFT_BLOCK"
    message: str = ""
    error: str | None = None  # set when evaluation raised (the constraint counts as violated)

    def to_dict(self, *, extended: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "layer": self.layer,
            "weight": self.weight,
            "passed": self.passed,
            "detail": self.detail,
        }
        if extended:
            out.update(severity=self.severity, message=self.message, error=self.error)
        return out


@dataclass(frozen=True, slots=True)
class ComplianceReport:
    """``C(τ, G_P)`` with its label, tool sequence and per-constraint breakdown."""

    compliance_score: float
    compliance_label: str
    details: str
    tool_sequence: tuple[str, ...]
    constraints: tuple[ConstraintResult, ...]
    spec_name: str | None = None
    tool_problems: tuple[Any, ...] = ()  # ToolUseProblem: calls breaking a `tool` declaration

    @property
    def score(self) -> float:
        return self.compliance_score

    @property
    def label(self) -> str:
        return self.compliance_label

    @property
    def violated(self) -> tuple[ConstraintResult, ...]:
        return tuple(c for c in self.constraints if not c.passed)

    @property
    def passed(self) -> bool:
        return not self.violated

    def by_layer(self) -> dict[str, tuple[int, int]]:
        """Per layer: (constraints passed, constraints in total)."""
        out: dict[str, tuple[int, int]] = {}
        for c in self.constraints:
            key = c.layer or "-"
            ok, total = out.get(key, (0, 0))
            out[key] = (ok + int(c.passed), total + 1)
        return out

    def to_dict(self, *, extended: bool = False) -> dict[str, Any]:
        """Exactly the Appendix B keys (``extended`` adds severity, message and errors)."""
        return {
            "compliance_score": self.compliance_score,
            "compliance_label": self.compliance_label,
            "details": self.details,
            "tool_sequence": list(self.tool_sequence),
            "constraints": [c.to_dict(extended=extended) for c in self.constraints],
            **({"tool_problems": [p.to_dict() for p in self.tool_problems]} if extended else {}),
        }


def score_of(results: tuple[ConstraintResult, ...]) -> float:
    """Definition 1. An empty procedure (total weight 0) scores 1.0: nothing was violated."""
    total = sum(c.weight for c in results)
    if total <= 0:
        return 1.0
    violated = sum(c.weight for c in results if not c.passed)
    # rounded like agentltl so that equal reports print equally (0.2, not 0.19999999999999996)
    return round(max(0.0, min(1.0, 1.0 - violated / total)), 6)


def label_of(score: float) -> str:
    if score >= 1.0:
        return FULL
    if score <= 0.0:
        return NONE
    return PARTIAL
