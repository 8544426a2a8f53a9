"""The miner's one error, in a leaf module so every mining module can raise it."""

from __future__ import annotations

from agentguard.errors import AgentGuardError


class MiningError(AgentGuardError, ValueError):
    """Nothing to mine (no readable trace) or a threshold out of range: the input, not
    the traces' content, is wrong, so nothing is proposed."""
