"""tau2-bench simulation runs: the items of a results file's ``simulations`` list
(``{"id", "task_id", "trial", "messages", "reward_info", "termination_reason", ...}``,
tau2's ``SimulationRun.model_dump()``).

Messages are ``system``/``user``/``assistant``/``tool``. Tool calls are flat
(``{"id", "name", "arguments", "requestor"}``) and may be made by the assistant
*or by the simulated user* (telecom: the user toggles airplane mode on their own
phone). A ``tool`` message answers by ``id``; ``"error": true`` marks a tool error.

Every call that ran is kept, in message order, whoever made it. Calls by the user
are marked: their positions are listed in ``metrics["user_tool_calls"]``, and
``num_tool_calls`` counts the assistant's calls only (what a firewall wrapping the
agent sees). ``task_id``, ``trial``, ``reward`` (``reward_info.reward``) and
``termination_reason`` ride along in the metrics. The user's and the assistant's
messages are dialogue events (``user_message`` / ``assistant_message``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import (
    FINAL_ANSWER,
    CallLog,
    arguments_of,
    list_at,
    mappings,
    result_of,
)
from agentguard.trace.model import Trace

CALL_KEYS: Final = frozenset({"id", "name", "arguments", "requestor"})
"""The keys of a tau2 ``ToolCall``."""

USER_TOOL_CALLS: Final = "user_tool_calls"
"""Metrics key: positions of the calls the simulated user made (tau2 ``requestor: user``)."""


def detect(value: Any) -> bool:
    """An object with ``messages``, a ``task_id`` and tau2's ``reward_info``/``termination_reason``."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("messages"), list)
        and "task_id" in value
        and ("reward_info" in value or "termination_reason" in value)
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:
    messages = value.get("messages")
    if not isinstance(messages, list) or not mappings(messages) or "task_id" not in value:
        raise TraceRecordError(
            "a tau2 simulation needs 'task_id' and 'messages' (a list of objects)", source=source
        )
    trace, users = read_messages(messages, source=source, final_answer=final_answer)
    reward_info = value.get("reward_info")
    reward = reward_info.get("reward") if isinstance(reward_info, Mapping) else None
    metrics: dict[str, Any] = {
        **trace.metrics,
        "num_tool_calls": sum(
            1
            for c in trace.calls
            if c.is_tool and c.name != FINAL_ANSWER and c.position not in users
        ),
        "task_id": value["task_id"],
        "trial": value.get("trial"),
        "reward": reward,
        "termination_reason": value.get("termination_reason"),
        USER_TOOL_CALLS: sorted(users),
    }
    return Trace(trace.calls, metrics)


def read_messages(
    messages: Sequence[Mapping[str, Any]], *, source: str, final_answer: bool = False
) -> tuple[Trace, set[int]]:
    """The calls of every requestor in order, and the positions the user made."""
    log = CallLog(source)
    users: set[int] = set()
    for index, msg in enumerate(messages):
        role = msg.get("role")
        where = f"message {index}"
        if role in ("assistant", "user"):
            calls = list_at(msg, "tool_calls", where, source)
            log.turn(role, msg.get("content"), len(calls))
            for tc in calls:
                if not isinstance(tc, Mapping):
                    raise TraceRecordError(f"{where}: a tool call must be an object", source=source)
                args = arguments_of(tc, "arguments", CALL_KEYS, where, source)
                slot = log.add(tc.get("name"), args, ref=tc.get("id"), where=where)
                if tc.get("requestor", role) == "user":
                    users.add(slot)
        elif role == "tool":
            parts = msg.get("tool_messages")
            for tm in parts if isinstance(parts, list) else [msg]:
                if isinstance(tm, Mapping):
                    error = tm.get("error") is True
                    log.resolve(tm.get("id"), result_of(tm.get("content")), error=error)
    if final_answer:
        answer = _final_text(messages)
        if answer is not None:
            log.final_answer(answer)
    return log.trace(), users


def _final_text(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The assistant's last text message when no tool call follows it."""
    for msg in reversed(messages):
        if msg.get("tool_calls"):
            return None
        if msg.get("role") == "assistant":
            text = msg.get("content")
            return text if isinstance(text, str) and text.strip() else None
    return None
