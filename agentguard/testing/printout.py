"""How the runnable examples print a guarded run: its decisions, its outcome, its log.

The examples print the same three things whatever framework ran the agent, so the
lines look alike across them and a reader compares frameworks, not print statements.
The decision log is read with nothing but ``json``: it is plain JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from agentguard.enforcement.decision import Decision
from agentguard.scoring import ComplianceReport
from agentguard.trace import Trace


def print_decisions(decisions: Iterable[Decision]) -> None:
    """One line per proposed call: the firewall's action and the call."""
    for decision in decisions:
        print(f"  {decision.action.value:>8}  {decision.tool}({dict(decision.args)})")


def print_outcome(trace: Trace, compliance: ComplianceReport, *, prefix: str = "") -> None:
    """What ran, in order, and the run's compliance score and label."""
    print(f"{prefix}executed:", " -> ".join(trace.names))
    print(f"{prefix}compliance:", compliance.score, compliance.label)


def print_decision_log(
    path: str | Path, fields: Sequence[str] = ("event", "action", "tool")
) -> None:
    """The log's records, read back with ``json``, showing ``fields`` of each."""
    print(f"decision log {path}, read with json:")
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in fields if k in record})


def print_run(
    decisions: Iterable[Decision], trace: Trace, compliance: ComplianceReport, log: str | Path
) -> None:
    """All three: the decisions, the outcome and the decision log."""
    print_decisions(decisions)
    print_outcome(trace, compliance)
    print_decision_log(log)


__all__ = ["print_decision_log", "print_decisions", "print_outcome", "print_run"]
