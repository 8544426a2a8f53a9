"""AgentDojo run files read as episodes, one per file, with no conversion step.

The calls come from the trace format (:mod:`agentguard.trace.formats.agentdojo`): the
calls that ran, dialogue events and the final answer excluded. Success is AgentDojo's
``utility`` (the user task's own check). Labels: ``dataset`` (``agentdojo-<suite>``),
``suite``, ``user_task``, ``injection_task`` (``none`` for a benign run), ``attack``
and ``model`` (AgentDojo's pipeline name), so ``--by model`` or ``--by attack`` groups
them.
"""

from __future__ import annotations

from typing import Any

from agentguard.errors import TraceRecordError
from agentguard.pec.episode import Episode, episode_from_trace
from agentguard.trace.formats import parse


def agentdojo_episode(run: Any, source: str) -> Episode:
    """One AgentDojo run file as an episode (see the module docstring)."""
    trace, _ = parse(run, source=source, format="agentdojo", final_answer=False)
    metrics = trace.metrics
    utility = metrics.get("utility")
    if not isinstance(utility, bool):
        raise TraceRecordError(
            "no 'utility' recorded: AgentDojo did not finish evaluating this run", source=source
        )
    labels = {
        "dataset": f"agentdojo-{metrics.get('suite_name')}",
        "suite": str(metrics.get("suite_name")),
        "user_task": str(metrics.get("user_task_id")),
        "injection_task": str(metrics.get("injection_task_id") or "none"),
        "attack": str(metrics.get("attack_type") or "none"),
        "model": str(metrics.get("pipeline_name")),
    }
    return episode_from_trace(
        trace, task_id=str(metrics["task_id"]), success=utility, labels=labels
    )


__all__ = ["agentdojo_episode"]
