"""What a finished firewall run leaves behind."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.enforcement.decision import Decision, Violation
from agentguard.monitor.verdict import Verdict
from agentguard.scoring.report import ComplianceReport
from agentguard.trace.model import Trace


@dataclass(frozen=True, slots=True)
class FirewallReport:
    """The compliance report of the executed trace, and every decision made on the way.

    ``attempts`` and ``decisions`` both list every proposal's decision in order (blocked
    ones included); ``late_violations`` were found only when a result arrived;
    ``verdicts`` are the monitor's final verdicts (equal to ``compliance``'s).
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

    @property
    def attempts(self) -> tuple[Decision, ...]:
        return self.decisions

    @property
    def blocked(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if not d.executes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "spec": self.spec_name,
            "spec_hash": self.spec_hash,
            "stopped": self.stopped,
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
