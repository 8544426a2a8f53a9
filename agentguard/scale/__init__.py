"""Scoring beyond one process: a local process pool, and Ray Datasets (``[ray]`` extra).

``score_dataset`` needs Ray; it is imported on first use, so ``import agentguard.scale``
works without it and the call says which extra to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentguard.scale.pool import map_chunks, verify_traces_parallel
from agentguard.scale.summary import ConstraintRate, CorpusSummary, summarize

if TYPE_CHECKING:
    from agentguard.scale.dataset import DatasetScores, score_dataset


def __getattr__(name: str) -> Any:
    if name in ("score_dataset", "DatasetScores"):
        from agentguard.scale import dataset

        return getattr(dataset, name)
    raise AttributeError(f"module 'agentguard.scale' has no attribute {name!r}")


__all__ = [
    "ConstraintRate",
    "CorpusSummary",
    "DatasetScores",
    "map_chunks",
    "score_dataset",
    "summarize",
    "verify_traces_parallel",
]
