"""Tool declarations checked on a call: types, bounds, data dependencies, preconditions.

:mod:`.checker` holds the one checker (:class:`ToolChecker`) of the language's ``tool``
declarations (``agentguard.language.ast.ToolDecl``), used by the firewall, offline tool-use
scoring and the PEC oracle; :mod:`.arguments` the checks and wording of one argument;
:mod:`.values` the value and path helpers; :mod:`.precondition`
the past-time ``requires`` formulas followed call by call.
"""

from __future__ import annotations

from agentguard.tools.arguments import signature
from agentguard.tools.checker import ToolChecker, ToolProblem, is_tool_check

__all__ = ["ToolChecker", "ToolProblem", "is_tool_check", "signature"]
