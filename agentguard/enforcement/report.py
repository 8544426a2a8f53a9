"""What a finished firewall run leaves behind."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.monitor.verdict import Verdict
from agentguard.scoring.report import ComplianceReport
from agentguard.trace.model import Trace


class Scored:
    """A compliance report made on first read, once.

    A finished run's score comes from the monitor's final verdicts at ``finish``; the
    detailed report (each constraint's witnesses, the replayed tool checks) takes the
    offline evaluator over the kept trace, several times the cost of the whole run's
    checks for a short agent run. Most runs are never asked for it: the adapters finish
    a run at every invocation. Equal when the reports are (comparing makes both).
    """

    __slots__ = ("_lock", "_make", "_report")

    def __init__(self, report: ComplianceReport | Callable[[], ComplianceReport]) -> None:
        self._lock = threading.Lock()
        if isinstance(report, ComplianceReport):
            self._report: ComplianceReport | None = report
            self._make: Callable[[], ComplianceReport] | None = None
        else:
            self._report, self._make = None, report

    def get(self) -> ComplianceReport:
        report = self._report
        if report is None:
            with self._lock:  # one evaluation, whichever thread reads first
                report = self._report
                if report is None:
                    assert self._make is not None  # set whenever no report is
                    report = self._report = self._make()
                    self._make = None  # the trace and spec it closed over are let go
        return report

    @property
    def made(self) -> bool:
        """Has the report been made (read, or given at construction)?"""
        return self._report is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scored):
            return NotImplemented
        return self.get() == other.get()

    __hash__ = None  # type: ignore[assignment]  # equal by a mutable cache's value

    def __repr__(self) -> str:
        return repr(self._report) if self._report is not None else "<scored on first read>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Scored, (self.get(),))  # a pickled report carries the report itself


@dataclass(frozen=True, slots=True, init=False)
class FirewallReport:
    """The compliance report of the executed trace, and every decision made on the way.

    ``attempts`` and ``decisions`` list the run's decisions in order: with
    ``keep_trace=True`` every proposal's, without it those that refused a call or carried
    a violation, an approval or a shadow-mode refusal (the decision log has them all);
    ``late_violations`` were found only when a result arrived;
    ``verdicts`` are the monitor's final verdicts (equal to ``compliance``'s). In shadow
    mode (``mode == "shadow"``) nothing was refused: ``would_block`` lists the decisions
    enforce mode would have refused, ``would_stop`` the first that would have stopped.
    """

    scored: Scored
    decisions: tuple[Decision, ...]
    trace: Trace
    stopped: bool
    log_path: Path | None = None
    run_id: str = ""
    spec_name: str | None = None
    spec_hash: str = ""
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    late_violations: tuple[Violation, ...] = ()
    mode: str = "enforce"
    trace_kept: bool = True  # False: ``Firewall(keep_trace=False)``, ``trace`` is empty

    def __init__(
        self,
        compliance: ComplianceReport | Callable[[], ComplianceReport],
        decisions: tuple[Decision, ...],
        trace: Trace,
        stopped: bool,
        log_path: Path | None = None,
        run_id: str = "",
        spec_name: str | None = None,
        spec_hash: str = "",
        verdicts: Mapping[str, Verdict] | None = None,
        late_violations: tuple[Violation, ...] = (),
        mode: str = "enforce",
        trace_kept: bool = True,
    ) -> None:
        """``compliance``: the report, or a function making it on first read."""
        fields = {
            "scored": Scored(compliance),
            "decisions": decisions,
            "trace": trace,
            "stopped": stopped,
            "log_path": log_path,
            "run_id": run_id,
            "spec_name": spec_name,
            "spec_hash": spec_hash,
            "verdicts": {} if verdicts is None else verdicts,
            "late_violations": late_violations,
            "mode": mode,
            "trace_kept": trace_kept,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @property
    def compliance(self) -> ComplianceReport:
        """The compliance report of the executed trace (made on first read: the offline
        evaluator over the kept trace, equal in score to the monitor's verdicts)."""
        return self.scored.get()

    @property
    def attempts(self) -> tuple[Decision, ...]:
        return self.decisions

    @property
    def blocked(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if not d.executes)

    @property
    def would_block(self) -> tuple[Decision, ...]:
        """Shadow mode: the calls enforce mode would have refused (BLOCK or STOP); they ran."""
        return tuple(d for d in self.decisions if d.shadow is not None)

    @property
    def would_stop(self) -> Decision | None:
        """Shadow mode: the first call at which enforce mode would have stopped the run."""
        return next((d for d in self.would_block if d.shadow is Action.STOP), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "spec": self.spec_name,
            "spec_hash": self.spec_hash,
            "stopped": self.stopped,
            "mode": self.mode,
            "would_block": [d.to_dict() for d in self.would_block],
            "log_path": str(self.log_path) if self.log_path is not None else None,
            "compliance": self.compliance.to_dict(),
            "verdicts": {k: v.value for k, v in self.verdicts.items()},
            "decisions": [d.to_dict() for d in self.decisions],
            "late_violations": [v.to_dict() for v in self.late_violations],
            "tool_sequence": list(self.trace.names),
            # the executed calls with their results, readable by agentguard.load_traces
            "trace": [c.to_record() for c in self.trace],
            "metrics": {k: v for k, v in self.trace.metrics.items() if _is_json(v)},
        }


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
