"""Simplified mode (AgentLTL Appendix D): 17 short templates, augmentation, aliases."""

from __future__ import annotations

from agentguard.bench.simplified.generate import (
    AUGMENTATIONS,
    difficulty_from_calls,
    generate_simplified,
    training_pool,
    training_set,
)
from agentguard.bench.simplified.templates import (
    HELD_OUT_TEMPLATES,
    SIMPLIFIED_TEMPLATES,
    TRAINING_TEMPLATES,
)
from agentguard.bench.simplified.vocab import ALIAS_POOL, IDENTITY, Vocab, random_vocab

__all__ = [
    "ALIAS_POOL",
    "AUGMENTATIONS",
    "HELD_OUT_TEMPLATES",
    "IDENTITY",
    "SIMPLIFIED_TEMPLATES",
    "TRAINING_TEMPLATES",
    "Vocab",
    "difficulty_from_calls",
    "generate_simplified",
    "random_vocab",
    "training_pool",
    "training_set",
]
