"""The adapters' names as the tests import them, visible to mypy too.

setuptools installs ``integrations/`` as ``agentguard.integrations`` through an editable
finder that mypy cannot follow; mypy, run from the repository root, reads the same files
as the top-level ``integrations`` package instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from integrations.langchain import (
        STATE_KEY,
        AgentGuardMiddleware,
        guard_tool_node,
        saved_firewall,
    )
    from integrations.smolagents import ExposedToolsError, ToolArgumentsError, bind_arguments
else:
    from agentguard.integrations.langchain import (
        STATE_KEY,
        AgentGuardMiddleware,
        guard_tool_node,
        saved_firewall,
    )
    from agentguard.integrations.smolagents import (
        ExposedToolsError,
        ToolArgumentsError,
        bind_arguments,
    )

__all__ = [
    "STATE_KEY",
    "AgentGuardMiddleware",
    "ExposedToolsError",
    "ToolArgumentsError",
    "bind_arguments",
    "guard_tool_node",
    "saved_firewall",
]
