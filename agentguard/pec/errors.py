"""Errors of the prefix-executability subsystem (leaf module: imports only `agentguard.errors`)."""

from __future__ import annotations

from agentguard.errors import AgentGuardError


class PecError(AgentGuardError, ValueError):
    """Episodes cannot be scored as given (empty input, FED out of range, unknown group key)."""


class ReplayError(AgentGuardError):
    """An environment could not be set up for a task (not a rejected call: that is a verdict)."""


__all__ = ["PecError", "ReplayError"]
