"""Severities: spec vocabulary shared by the language, the firewall and the reports.

A leaf module (it imports nothing from agentguard), factored out so that the syntax tree
can name a constraint's severity without importing the enforcement layer that acts on it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class SeverityKind(str, enum.Enum):
    """The four severities of AgentLTL Appendix A.5.3, and ``ASK``.

    ``ASK`` is agentguard's extension beyond the paper: a violating call is held for a
    human approver (docs/firewall.md, "Human approval"); without an approver it acts as
    the firewall's ``ask_fallback`` severity (SOFT_BLOCK by default).
    """

    HARD_STOP = "HARD_STOP"
    SOFT_BLOCK = "SOFT_BLOCK"
    BLOCK_AND_WARN = "BLOCK_AND_WARN"
    TOLERATE = "TOLERATE"
    ASK = "ASK"


@dataclass(frozen=True, slots=True)
class Severity:
    """A severity tag; ``limit`` is SOFT_BLOCK's escalation count (None = firewall default)."""

    kind: SeverityKind
    limit: int | None = None

    def __str__(self) -> str:
        if self.kind is SeverityKind.SOFT_BLOCK and self.limit is not None:
            return f"SOFT_BLOCK({self.limit})"
        return self.kind.value

    @classmethod
    def parse(cls, text: str) -> Severity:
        text = text.strip()
        if text.startswith("SOFT_BLOCK(") and text.endswith(")"):
            return cls(SeverityKind.SOFT_BLOCK, int(text[len("SOFT_BLOCK(") : -1]))
        return cls(SeverityKind(text))


DEFAULT_SEVERITY = Severity(SeverityKind.SOFT_BLOCK)
"""A constraint without a ``severity`` clause is SOFT_BLOCK with the firewall's default limit."""
