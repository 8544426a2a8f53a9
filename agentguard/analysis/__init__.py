"""agentguard.analysis: what a spec will really do, decided before it runs.

* :func:`lint_spec` — warnings (``unsatisfiable``, ``valid``, ``conflict``,
  ``unknown-argument``, ``type-mismatch``, ``unknown-tool``, ``tool-mismatch``,
  ``never-blocks``, ``late``), each located;
* :func:`find_witness` — a shortest trace satisfying the whole spec, or the proof that
  none does;
* :func:`compare_tools` — the spec's tools against an agent's (names, JSON schemas);
  :class:`ToolMismatchError` when ``strict_tools=True`` makes a difference an error.

Temporal questions are decided on the monitor's own automata (the propositional
abstraction of each constraint, explored within a bound): exact without data tests,
sound with them. See docs/lint.md.
"""

from __future__ import annotations

from agentguard.analysis.findings import WARNING_KINDS, LintWarning, WarningKind
from agentguard.analysis.lint import lint_spec
from agentguard.analysis.witness import Witness, find_witness
from agentguard.enforcement.agent_tools import ToolMismatch, ToolMismatchError, compare_tools

__all__ = [
    "WARNING_KINDS",
    "LintWarning",
    "ToolMismatch",
    "ToolMismatchError",
    "WarningKind",
    "Witness",
    "compare_tools",
    "find_witness",
    "lint_spec",
]
