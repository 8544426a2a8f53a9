"""Compliance scoring of completed traces (Definition 1, Appendix B)."""

from agentguard.scoring.batch import verify_traces
from agentguard.scoring.report import ComplianceReport, ConstraintResult
from agentguard.scoring.verify import verify_trace

__all__ = ["ComplianceReport", "ConstraintResult", "verify_trace", "verify_traces"]
