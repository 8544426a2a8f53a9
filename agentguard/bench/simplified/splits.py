"""The held-out validation splits of AgentLTL Section 4.3 (Table 2), in simplified mode.

The paper validates a fine-tuned model on four splits that training never saw:

- ``unaugmented`` (83): the 15 training templates re-instantiated with new parameters;
- ``augmented`` (100): the same, with the optional prefix / suffix ``tool_a`` calls;
- ``unseen-pattern`` (39): the two held-out templates (``loop_termination``,
  ``branch_selection``) on the training tool names;
- ``diverse-tool`` (39): trained patterns, every tool and argument renamed to an alias
  from Table 14's pool (D.4), so the names are ones training never showed.

"New parameters" is what separates a split from the training set: :func:`training_pool`
draws its cores from seeds ``0 .. cores_per_slot - 1`` (0-29 for the paper's 300), and a
split starts at :data:`HELD_OUT_FIRST_SEED`. The parameters of a seed repeat with period
1560 (``lcm`` of the moduli in ``params_for``), so seeds 1000-1499 give parameter sets
no training seed has, and the tools' own draws differ with the seed anyway.

The paper gives each split's size but not its make-up; ours walks the (template,
variant) slots in turn, one seed per instance, so every pattern is covered evenly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import cycle
from typing import Literal

from agentguard.bench.errors import BadParameterError
from agentguard.bench.instance import Instance
from agentguard.bench.simplified.generate import Augmentation, generate_simplified
from agentguard.bench.simplified.templates import (
    HELD_OUT_TEMPLATES,
    SIMPLIFIED_TEMPLATES,
    TRAINING_TEMPLATES,
)
from agentguard.bench.simplified.vocab import IDENTITY, random_vocab

Split = Literal["unaugmented", "augmented", "unseen-pattern", "diverse-tool"]

SPLIT_SIZES: Mapping[Split, int] = {
    "unaugmented": 83,
    "augmented": 100,
    "unseen-pattern": 39,
    "diverse-tool": 39,
}
"""Table 2's instance counts, the default size of each split."""

SPLITS: tuple[Split, ...] = tuple(SPLIT_SIZES)

HELD_OUT_FIRST_SEED = 1000
"""The first seed of every split: clear of the training pool's seeds (see the module)."""

_EXTRA: tuple[Augmentation, ...] = ("prefix", "suffix", "both")


def _slots(templates: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every (template, transform variant) pair of ``templates``, in table order."""
    return [
        (name, variant)
        for name in templates
        for variant in (("a", "c") if SIMPLIFIED_TEMPLATES[name].transform else ("a",))
    ]


def _instance(split: Split, name: str, variant: str, seed: int, k: int) -> Instance:
    if split == "diverse-tool":
        vocab = random_vocab(seed, SIMPLIFIED_TEMPLATES[name].tools)
        return generate_simplified(name, seed, variant=variant, vocab=vocab)
    if split == "augmented":
        try:
            return generate_simplified(name, seed, variant=variant, augmentation=_EXTRA[k % 3])
        except BadParameterError:  # a 7-call core takes only a prefix (the 8-call cap)
            return generate_simplified(name, seed, variant=variant, augmentation="prefix")
    return generate_simplified(name, seed, variant=variant, vocab=IDENTITY)


def iter_split(split: Split, *, first_seed: int = HELD_OUT_FIRST_SEED) -> Iterator[Instance]:
    """The split's instances without end: the k-th takes slot ``k mod slots``, seed
    ``first_seed + k``."""
    if split not in SPLIT_SIZES:
        raise BadParameterError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    slots = _slots(HELD_OUT_TEMPLATES if split == "unseen-pattern" else TRAINING_TEMPLATES)
    for k, (name, variant) in enumerate(cycle(slots)):
        yield _instance(split, name, variant, first_seed + k, k // len(slots))


def validation_split(
    split: Split, size: int | None = None, *, first_seed: int = HELD_OUT_FIRST_SEED
) -> list[Instance]:
    """The first ``size`` instances of ``split`` (default: Table 2's count)."""
    if split not in SPLIT_SIZES:
        raise BadParameterError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    n = SPLIT_SIZES[split] if size is None else size
    if n < 0:
        raise BadParameterError(f"a split size must be a non-negative integer, got {size!r}")
    out: list[Instance] = []
    for instance in iter_split(split, first_seed=first_seed):
        if len(out) == n:
            break
        out.append(instance)
    return out


__all__ = [
    "HELD_OUT_FIRST_SEED",
    "SPLITS",
    "SPLIT_SIZES",
    "Split",
    "iter_split",
    "validation_split",
]
