"""OpenAI Chat Completions messages: assistant ``tool_calls`` (or the legacy
``function_call``) joined with ``tool`` (or ``function``) replies.

Whole request/response log lines are unwrapped first (see ``wrappers``). Inspect AI
messages are this format too: its tool calls name the function directly
(``{"id", "function": "name", "arguments": {...}}``) and a tool reply's ``error``
(``{type, message}``) marks a tool error.

A tool reply whose text is agentguard's refusal (:mod:`agentguard.trace.refusal`: the
marker line first) answers a call that never ran: the call is left out. An assistant
message with no tool call whose text is a refusal is agentguard's own note (the LangChain
adapter ends a stopped turn with one): no dialogue event and no final answer; so is a user
message whose text is a refusal (the LangChain adapter's note refusing a final answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import (
    CallLog,
    arguments_of,
    list_at,
    mappings,
    result_of,
    text_of,
)
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal

ROLES = ("system", "developer", "user", "assistant", "tool", "function")

CALL_KEYS: Final = frozenset({"id", "type", "function", "index"})
"""The keys of a chat ``tool_calls`` entry (``{id, type, function: {...}}``; ``index`` in
streamed deltas); an object under any other is refused when the function has no
arguments (:func:`~agentguard.trace.formats._base.arguments_of`)."""
FUNCTION_KEYS: Final = frozenset({"name", "arguments"})
"""The keys of its ``function`` (and of a legacy ``function_call``)."""
INSPECT_CALL_KEYS: Final = frozenset(
    {"id", "type", "function", "arguments", "parse_error", "view", "internal", "internal_name"}
)
"""The keys of an Inspect AI ``ToolCall`` (``function`` is the tool's name there)."""


def detect(value: Any) -> bool:
    """A list of objects with chat ``role``s (and no Anthropic content blocks)."""
    return (
        mappings(value)
        and bool(value)
        and all(m.get("role") in ROLES for m in value)
        and not any(_has_anthropic_blocks(m) for m in value)
    )


def _has_anthropic_blocks(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in content
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:
    return read_messages(value, source=source, final_answer=final_answer)


def from_openai_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    source: str = "<messages>",
    final_answer: bool = False,
    messages_kept: bool = False,
) -> Trace:
    """A trace from OpenAI-style chat messages: assistant ``tool_calls`` (or legacy
    ``function_call``) joined with ``tool`` (or ``function``) replies.

    ``final_answer=True`` adds ``final_answer(answer=...)`` when the conversation ends
    with an assistant text answer; ``messages_kept=True`` keeps the user and assistant
    messages as dialogue events. Also importable as ``agentguard.trace.from_openai_messages``
    (it was ``Trace.from_openai_messages``; a loader lives with the loaders, so the trace
    model imports no format).
    """
    trace = read_messages(messages, source=source, final_answer=final_answer)
    return trace if messages_kept else trace.without_messages()


def read_messages(messages: Sequence[Any], *, source: str, final_answer: bool = False) -> Trace:
    """Calls from assistant messages, results from tool replies, and the user and
    assistant messages as dialogue events, in message order."""
    log = CallLog(source)
    for index, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise TraceRecordError(f"message {index} is not an object", source=source)
        role = msg.get("role")
        if role == "user":
            if not is_refusal(text_of(msg.get("content"))):  # not agentguard's note
                log.turn(role, msg.get("content"))
        elif role == "assistant":
            if not _note(msg):
                _assistant(log, msg, index)
        elif role == "tool":
            error = _tool_error(msg)
            result = result_of(msg.get("content"))
            if error is not None and result in (None, "", []):
                result = error
            refused = is_refusal(text_of(msg.get("content")))
            log.resolve(msg.get("tool_call_id"), result, error=error is not None, refused=refused)
        elif role == "function":  # legacy function-calling reply, joined by name
            log.resolve(None, result_of(msg.get("content")), name=msg.get("name"))
    if final_answer:
        answer = _final_text(messages)
        if answer is not None:
            log.final_answer(answer)
    return log.trace()


def _assistant(log: CallLog, msg: Mapping[str, Any], index: int) -> None:
    where = f"message {index}"
    calls = list_at(msg, "tool_calls", where, log.source)
    legacy = msg.get("function_call")
    log.turn("assistant", msg.get("content"), len(calls) + isinstance(legacy, Mapping))
    for tc in calls:
        fn = tc.get("function", tc) if isinstance(tc, Mapping) else None
        if isinstance(fn, str):  # Inspect AI: {"id", "function": name, "arguments": {...}}
            args = arguments_of(tc, "arguments", INSPECT_CALL_KEYS, where, log.source)
            log.add(fn, args, ref=tc.get("id"), where=where)
            continue
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise TraceRecordError(f"{where}: tool call without a function name", source=log.source)
        read = FUNCTION_KEYS if fn is not tc else FUNCTION_KEYS | CALL_KEYS
        args = arguments_of(
            fn, "arguments", read, where, log.source, outer=tc, outer_read=CALL_KEYS
        )
        log.add(fn["name"], args, ref=tc.get("id"), where=where)
    if isinstance(legacy, Mapping):
        at = f"{where} function_call"
        log.add(
            legacy.get("name"),
            arguments_of(legacy, "arguments", FUNCTION_KEYS, at, log.source),
            where=at,
        )


def _note(msg: Mapping[str, Any]) -> bool:
    """An assistant message agentguard added (the refusal that ends a stopped turn)."""
    return (
        not msg.get("tool_calls")
        and not msg.get("function_call")
        and is_refusal(text_of(msg.get("content")))
    )


def _tool_error(msg: Mapping[str, Any]) -> Any:
    """The error of a tool reply, when the log records one (Inspect AI's ``error`` object
    ``{type, message}`` or its older ``tool_error`` text); None otherwise."""
    error = msg.get("error")
    if isinstance(error, Mapping):
        return error.get("message", dict(error))
    if isinstance(error, str) and error:
        return error
    legacy = msg.get("tool_error")
    return legacy if isinstance(legacy, str) and legacy else None


def _final_text(messages: Sequence[Any]) -> Any:
    """The last message's text when it is an assistant answer with no tool call."""
    if not messages or not isinstance(messages[-1], Mapping):
        return None
    last = messages[-1]
    if last.get("role") != "assistant" or last.get("tool_calls") or last.get("function_call"):
        return None
    if _note(last):
        return None
    text = text_of(last.get("content"))
    return text if isinstance(text, str) and text.strip() else None
