"""tau-bench result files: a JSON list of ``EnvRunResult`` items
``{"task_id", "reward", "info", "traj", "trial"}`` (``run.py`` dumps one list per run),
``traj`` being the OpenAI-style chat messages of the episode.

Each item is one trace, read by the chat reader; ``task_id``, ``trial`` and
``reward`` ride along in the trace's metrics (so loaders label the trace by task and
trial, and PEC reads ``reward == 1`` as success).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import mappings
from agentguard.trace.formats.openai_chat import read_messages
from agentguard.trace.model import Trace


def detect(value: Any) -> bool:
    """An object with a ``traj`` message list, a ``task_id`` and a ``reward``."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("traj"), list)
        and "task_id" in value
        and "reward" in value
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:
    traj = value.get("traj")
    if not isinstance(traj, list) or not mappings(traj) or "task_id" not in value:
        raise TraceRecordError(
            "a tau-bench result item needs 'task_id' and 'traj' (a list of messages)",
            source=source,
        )
    trace = read_messages(traj, source=source, final_answer=final_answer)
    metrics = {
        **trace.metrics,
        "task_id": value["task_id"],
        "trial": value.get("trial"),
        "reward": value.get("reward"),
    }
    return Trace(trace.calls, metrics)
