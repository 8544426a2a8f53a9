"""Simplified mode (AgentLTL Appendix D): 17 short templates, augmentation, aliases,
and the held-out validation splits of Section 4.3."""

from __future__ import annotations

from agentguard.bench.simplified.generate import (
    AUGMENTATIONS,
    difficulty_from_calls,
    generate_simplified,
    round_robin,
    training_pool,
    training_set,
)
from agentguard.bench.simplified.splits import (
    HELD_OUT_FIRST_SEED,
    SPLIT_SIZES,
    SPLITS,
    Split,
    validation_split,
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
    "HELD_OUT_FIRST_SEED",
    "HELD_OUT_TEMPLATES",
    "IDENTITY",
    "SIMPLIFIED_TEMPLATES",
    "SPLITS",
    "SPLIT_SIZES",
    "TRAINING_TEMPLATES",
    "Split",
    "Vocab",
    "difficulty_from_calls",
    "generate_simplified",
    "random_vocab",
    "round_robin",
    "training_pool",
    "training_set",
    "validation_split",
]
