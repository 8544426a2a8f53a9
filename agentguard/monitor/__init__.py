"""agentguard.monitor: incremental three-valued verdicts on prefixes of a run."""

from __future__ import annotations

from agentguard.monitor.compiled import CompiledSpec, compile_spec
from agentguard.monitor.monitor import FormulaMonitor, Monitor, MonitorStateError, classify
from agentguard.monitor.peek import Peek
from agentguard.monitor.report import budget_report
from agentguard.monitor.verdict import Classification, Enforceability, Verdict

__all__ = [
    "Classification",
    "CompiledSpec",
    "Enforceability",
    "FormulaMonitor",
    "Monitor",
    "MonitorStateError",
    "Peek",
    "Verdict",
    "budget_report",
    "classify",
    "compile_spec",
]
