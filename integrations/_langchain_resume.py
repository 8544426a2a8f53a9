"""A run taken over mid-way (resumed in another process, or after a crash): the calls that
ran before the session took over, recorded from their answers in the conversation.

The checkpoint is saved at each model turn, before the batch runs, so the calls answered
after the point it had read the conversation to ran after it. See
:func:`record_calls_run_elsewhere` and docs/integrations.md, "A tool that asks a human".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession
from agentguard.trace.refusal import is_refusal

from ._langchain_arguments import called_arguments
from ._langchain_calls import result_of

try:
    from langchain_core.messages import AIMessage, ToolMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


def record_calls_run_elsewhere(
    session: GuardSession,
    history: Sequence[Any],
    position: Mapping[str, Any] | None,
    tools: Mapping[str, Any] | None = None,
) -> None:
    """Record the calls that ran before this session took over the run and that the
    checkpoint it was restored from does not hold, so the trace holds every call that ran.

    The checkpoint is saved at each model turn, before the model answers, so the calls of
    the batches answered after the point it had read the conversation to (``position``)
    ran after it: the siblings of a tool that called ``interrupt()`` (LangGraph does not
    run them again when the thread is resumed in another process), or a whole batch
    whose next model call crashed before ``invoke(None)`` resumed it elsewhere. Without
    a position it can trust (an older checkpoint, a rewritten history), only the last
    batch is looked at, and only if this session decided some of its calls (it took that
    batch over). A call this session decided, or whose answer is a refusal (its marker
    line), is not recorded, nor, when the run keeps a log, a call its lines do not show
    ran (``Firewall.ran_elsewhere``: a tool's ``Command`` can write a call and its
    answer into the conversation; those it shows are not logged again). They enter the trace now, after the calls this process ran,
    each with its answer as its result (an error answer as its error), as the tool gate
    records an answer; each with its arguments as the tool received them, when
    ``tools`` (the agent's, by name) has it."""
    known = {d.tool_call_id for d in session.attempts}
    # with a log, only what its lines show ran under the guard: a tool's Command may have
    # written a call and its answer into the conversation that never ran
    logged = session.firewall.ran_elsewhere if session.active else None
    read = _trusted_read(history, position)
    if read is not None:
        batches = _answered_batches(history, read)
    else:
        batch, answers = _last_answered_batch(history)
        if batch is None or not any(c.get("id") in known for c in batch.tool_calls):
            return  # not a batch this session took part in
        batches = [(batch, answers)]
    for batch, answers in batches:
        for tool_call in batch.tool_calls:
            call_id = tool_call.get("id")
            answer = answers.get(call_id) if call_id is not None else None
            if answer is None or call_id in known:
                continue
            if logged is not None and call_id not in logged:
                continue  # no line of the run's log says it ran
            result = result_of(answer)
            if is_refusal(result):
                continue
            error = str(result) if answer.status == "error" else None
            args = called_arguments(tools, tool_call)
            session.record(str(tool_call["name"]), args, result, error=error, tool_call_id=call_id)


def _trusted_read(history: Sequence[Any], position: Mapping[str, Any] | None) -> int | None:
    """``position``'s count of messages read, when ``history`` still starts as it did
    (the last message read is where it was); else None."""
    if position is None:
        return None
    read = position.get("read")
    if type(read) is not int or not 0 <= read <= len(history):
        return None
    if read == 0:  # saved before anything was read or run (see ``_position``)
        return 0
    return read if history[read - 1].id == position.get("last_id") else None


def _answered_batches(history: Sequence[Any], read: int) -> list[tuple[AIMessage, dict[str, Any]]]:
    """The model messages from ``read`` on with tool calls, each with the answers that
    follow it (before the next model message) by call id."""
    out: list[tuple[AIMessage, dict[str, Any]]] = []
    ids: set[Any] = set()  # the call ids of the model message the answers follow
    for message in history[read:]:
        if isinstance(message, AIMessage):
            ids = {c.get("id") for c in message.tool_calls}
            if ids:
                out.append((message, {}))
        elif isinstance(message, ToolMessage) and message.tool_call_id in ids:
            out[-1][1].setdefault(message.tool_call_id, message)
    return out


def _last_answered_batch(history: Sequence[Any]) -> tuple[AIMessage | None, dict[str, Any]]:
    """The last model message whose tool calls have answers after it, and those answers
    by call id (ids are matched after their message only: a provider, or a scripted
    model in a new process, may use an id again)."""
    later: dict[str, Any] = {}
    for message in reversed(history):
        if isinstance(message, ToolMessage):
            later.setdefault(message.tool_call_id, message)
        elif isinstance(message, AIMessage) and message.tool_calls:
            ids = {c.get("id") for c in message.tool_calls}
            answers = {i: m for i, m in later.items() if i in ids}
            if answers:
                return message, answers
            later.clear()  # answers further up belong to earlier messages
    return None, {}


__all__ = ["record_calls_run_elsewhere"]
