"""Mining: propose a least-privilege AgentLTL spec from recorded runs (docs/mining.md).

Shadow mode shows what an agent really does; :func:`mine` turns those runs into a spec
to review, test and enforce: the tools and argument values used, DECLARE-style temporal
constraints with their support and confidence, and the data flows between calls.
"""

from __future__ import annotations

from agentguard.mining.declare import TEMPLATES, discover
from agentguard.mining.errors import MiningError
from agentguard.mining.miner import mine
from agentguard.mining.model import ArgumentSchema, Candidate, Evidence, MinedSpec, ToolSchema

__all__ = [
    "TEMPLATES",
    "ArgumentSchema",
    "Candidate",
    "Evidence",
    "MinedSpec",
    "MiningError",
    "ToolSchema",
    "discover",
    "mine",
]
