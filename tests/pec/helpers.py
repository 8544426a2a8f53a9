"""Builders shared by the pec tests (real episodes, no mocks)."""

from __future__ import annotations

from agentguard.pec.episode import Episode, Scored
from agentguard.pec.labels import Failure, FailureLabel
from agentguard.trace.model import Call


def scored(
    task: str,
    horizon: int,
    fed: int,
    success: bool,
    *,
    label: FailureLabel | None = FailureLabel.SCHEMA,
    **labels: str,
) -> Scored:
    """A scored episode with ``horizon`` dummy calls (``horizon = 0`` means a no-tool episode)."""
    calls = tuple(Call(f"tool_{i}", {}) for i in range(horizon))
    episode = Episode(task, calls, success, labels)
    failed = fed <= episode.horizon
    return Scored(episode, fed, Failure(label, "test") if failed and label else None)


def worked_example() -> list[Scored]:
    """BFCL-v3, Llama-4 Maverick, Plan-Conditioned ReAct (prefix-metrics.md): N = 200."""
    eps = [scored(f"ok{i}", 3, 4, True) for i in range(10)]
    eps += [scored(f"rec{i}", 5, 1 + i % 5, True) for i in range(138)]
    eps += [scored(f"bad{i}", 4, 1 + i % 4, False) for i in range(52)]
    return eps
