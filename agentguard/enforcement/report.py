"""What a finished firewall run leaves behind."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.monitor.verdict import Verdict
from agentguard.scoring.report import ComplianceReport
from agentguard.trace.model import Trace


@dataclass(frozen=True, slots=True)
class FirewallReport:
    """The compliance report of the executed trace, and every decision made on the way.

    ``attempts`` and ``decisions`` both list every proposal's decision in order (blocked
    ones included); ``late_violations`` were found only when a result arrived;
    ``verdicts`` are the monitor's final verdicts (equal to ``compliance``'s). In shadow
    mode (``mode == "shadow"``) nothing was refused: ``would_block`` lists the decisions
    enforce mode would have refused, ``would_stop`` the first that would have stopped.
    """

    compliance: ComplianceReport
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
