"""The smolagents adapter's errors, in a leaf its modules share (they are drawn in
``agentguard/errors.py``)."""

from __future__ import annotations

from dataclasses import replace

from agentguard.enforcement.decision import Decision
from agentguard.errors import AgentGuardError
from agentguard.guard import blocked_text


class ToolCallBlocked(AgentGuardError):
    """Raised inside a CodeAgent's code when the firewall blocks a call; the model sees it.

    Model code catches it, so it carries a copy of the decision: changing its arguments
    in place leaves the run's own record of the refusal as it was."""

    def __init__(self, decision: Decision) -> None:
        approval = None if decision.approval is None else dict(decision.approval)
        self.decision = replace(decision, args=decision.arguments(), approval=approval)
        super().__init__(blocked_text(decision))


class ToolArgumentsError(AgentGuardError, TypeError):
    """Positional arguments that do not fit the tool's declared inputs."""


class FinalAnswerRefused(AgentGuardError):
    """The firewall refused the final answer; smolagents shows this to the model."""


class StreamSupersededError(AgentGuardError, RuntimeError):
    """A streamed run's generator was resumed after another run of the same agent began:
    its run ended then, and its steps are not run by the newer run's firewall."""


class ExposedToolsError(AgentGuardError, ValueError):
    """A CodeAgent's authorised imports let model code reach the unguarded tool objects."""


__all__ = [
    "ExposedToolsError",
    "FinalAnswerRefused",
    "StreamSupersededError",
    "ToolArgumentsError",
    "ToolCallBlocked",
]
