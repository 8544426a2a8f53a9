"""Reports and constraint results built in bulk, for :func:`~agentguard.scoring.verify_traces`.

Both are frozen, slotted dataclasses: their generated ``__init__`` sets each field through
``object.__setattr__`` (past the frozen guard), and that was half the cost of the 1,000
reports of a batch. Here each field is set through its slot's own descriptor: the same
object, field for field (tests/scoring/test_builders.py), in about half the time. Neither
class has a ``__post_init__`` or a default that computes; the check below, run at import,
keeps it so (a field added, renamed or validated would fail it loudly).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from agentguard.scoring.report import ComplianceReport, ConstraintResult

_RESULT_FIELDS = ("name", "layer", "weight", "passed", "detail", "severity", "message", "error")
_REPORT_FIELDS = (
    "compliance_score",
    "compliance_label",
    "details",
    "tool_sequence",
    "constraints",
    "spec_name",
    "tool_problems",
)
for _cls, _names in ((ConstraintResult, _RESULT_FIELDS), (ComplianceReport, _REPORT_FIELDS)):
    if tuple(f.name for f in fields(_cls)) != _names or hasattr(_cls, "__post_init__"):
        raise TypeError(f"{_cls.__name__} changed: update agentguard/scoring/builders.py")

_new = object.__new__
_n, _l, _w, _p, _d, _s, _m, _e = (getattr(ConstraintResult, f).__set__ for f in _RESULT_FIELDS)
_cs, _cl, _cd, _ts, _cc, _sn, _tp = (getattr(ComplianceReport, f).__set__ for f in _REPORT_FIELDS)


def constraint_result(
    name: str,
    layer: str | None,
    weight: float,
    passed: bool,
    detail: str,
    severity: str,
    message: str,
    error: str | None,
) -> ConstraintResult:
    """``ConstraintResult(name, layer, weight, passed, detail, severity, message, error)``."""
    out: ConstraintResult = _new(ConstraintResult)
    _n(out, name)
    _l(out, layer)
    _w(out, weight)
    _p(out, passed)
    _d(out, detail)
    _s(out, severity)
    _m(out, message)
    _e(out, error)
    return out


def compliance_report(
    score: float,
    label: str,
    details: str,
    tool_sequence: tuple[str, ...],
    constraints: tuple[ConstraintResult, ...],
    spec_name: str | None,
    tool_problems: tuple[Any, ...],
) -> ComplianceReport:
    """``ComplianceReport(score, label, details, tool_sequence, constraints, spec_name,
    tool_problems)``."""
    out: ComplianceReport = _new(ComplianceReport)
    _cs(out, score)
    _cl(out, label)
    _cd(out, details)
    _ts(out, tool_sequence)
    _cc(out, constraints)
    _sn(out, spec_name)
    _tp(out, tool_problems)
    return out


__all__ = ["compliance_report", "constraint_result"]
