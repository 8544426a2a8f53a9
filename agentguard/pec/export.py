"""One summary line per scored episode (``agentguard pec ... --episodes OUT.jsonl``).

The report aggregates; this file lets a reader see *which* runs failed *where*:
``{"task_id", "trial", "labels", "T", "fed", "executable", "label", "reason",
"success", "source"}``. ``trial`` is null when the format has none, ``label`` and
``reason`` are null for a fully executable episode (``fed = T + 1``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentguard.errors import AgentGuardError
from agentguard.pec.episode import Scored


def episode_row(scored: Scored, *, source: str | None = None) -> dict[str, Any]:
    """The summary record of one scored episode."""
    episode = scored.episode
    failure = scored.failure
    trial = episode.labels.get("trial")
    return {
        "task_id": episode.task_id,
        "trial": int(trial) if trial is not None and trial.lstrip("-").isdigit() else trial,
        "labels": dict(episode.labels),
        "T": episode.horizon,
        "fed": scored.fed,
        "executable": scored.executable,
        "label": failure.label.value if failure is not None else None,
        "reason": failure.reason if failure is not None else None,
        "success": episode.success,
        "source": source,
    }


def write_episodes(rows: Iterable[tuple[Scored, str | None]], path: str | Path) -> int:
    """Write one JSON line per ``(scored, source)``; returns how many were written."""
    p = Path(path)
    count = 0
    try:
        with p.open("w", encoding="utf-8") as out:
            for scored, source in rows:
                out.write(json.dumps(episode_row(scored, source=source)) + "\n")
                count += 1
    except OSError as exc:
        raise AgentGuardError(f"{p}: cannot write episodes ({exc.strerror or exc})") from None
    return count


__all__ = ["episode_row", "write_episodes"]
