"""The smolagents adapter's errors, in a leaf its modules share (they are drawn in
``agentguard/errors.py``)."""

from __future__ import annotations

from agentguard.enforcement.decision import Decision
from agentguard.errors import AgentGuardError
from agentguard.guard import blocked_text


class ToolCallBlocked(AgentGuardError):
    """Raised inside a CodeAgent's code when the firewall blocks a call; the model sees it."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(blocked_text(decision))


class ToolArgumentsError(AgentGuardError, TypeError):
    """Positional arguments that do not fit the tool's declared inputs."""


class FinalAnswerRefused(AgentGuardError):
    """The firewall refused the final answer; smolagents shows this to the model."""


class ExposedToolsError(AgentGuardError, ValueError):
    """A CodeAgent's authorised imports let model code reach the unguarded tool objects."""


__all__ = ["ExposedToolsError", "FinalAnswerRefused", "ToolArgumentsError", "ToolCallBlocked"]
