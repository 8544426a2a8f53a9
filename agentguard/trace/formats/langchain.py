"""LangChain / LangGraph messages: ``AIMessage.tool_calls`` joined with ``ToolMessage``
by ``tool_call_id``.

Three serialisations are read: ``messages_to_dict`` (``{"type": "ai", "data": {...}}``),
``message.model_dump()`` (``{"type": "ai", "content": ..., "tool_calls": [...]}``) and
``langchain_core.load.dumpd`` (``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
"kwargs": {...}}``). A ``ToolMessage`` with ``status="error"`` is a tool error, unless its
text is agentguard's refusal (:mod:`agentguard.trace.refusal`: the marker line first): then
the call never ran and is left out. An AI message with no tool call whose text is a
refusal is agentguard's own note (a stopped turn), not the model's: no dialogue event and
no final answer.
``invalid_tool_calls`` (output the model produced but that did not parse) never ran and
are left out. Without ``tool_calls``, OpenAI-style ``additional_kwargs["tool_calls"]``
(older serialisations) are read. The final answer is the last message when it is an
AI message with text and no tool call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.trace.formats._base import CallLog, arguments_of, mappings, result_of, text_of
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal

_KINDS = {
    "ai": "ai",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "tool": "tool",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "human": "human",
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "system": "system",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "chat": "chat",
    "ChatMessage": "chat",
    "function": "function",
    "FunctionMessage": "function",
    "remove": "remove",
    "RemoveMessage": "remove",
}


CALL_KEYS: Final = frozenset({"name", "args", "id", "type"})
"""The keys of a LangChain ``ToolCall``."""
OPENAI_CALL_KEYS: Final = frozenset({"id", "type", "function", "index"})
FUNCTION_KEYS: Final = frozenset({"name", "arguments"})
"""The keys of an OpenAI-style entry in ``additional_kwargs["tool_calls"]`` and of its
``function``."""


def detect(value: Any) -> bool:
    """Objects whose ``type`` names a LangChain message kind (or ``lc`` constructors)."""
    return mappings(value) and bool(value) and all(_kind(m) is not None for m in value)


def _kind(message: Mapping[str, Any]) -> str | None:
    if message.get("lc") == 1 and isinstance(message.get("id"), list) and message["id"]:
        return _KINDS.get(str(message["id"][-1]))
    kind = message.get("type")
    return _KINDS.get(kind) if isinstance(kind, str) else None


def _data(message: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in ("data", "kwargs"):
        inner = message.get(key)
        if isinstance(inner, Mapping):
            return inner
    return message


def load(value: Any, source: str, final_answer: bool) -> Trace:
    log = CallLog(source)
    last_kind: str | None = None
    last: Mapping[str, Any] = {}
    for index, message in enumerate(value):
        kind, data = _kind(message), _data(message)
        last_kind, last = kind, data
        if kind == "human" and data.get("name") != "agentguard":  # not the firewall's notes
            log.turn("user", data.get("content"))
        if kind == "ai" and _note(data):
            continue  # agentguard's note, not a model turn
        if kind == "ai":
            log.turn("assistant", data.get("content"), len(_tool_calls(data)))
            for call in _tool_calls(data):
                if not isinstance(call, Mapping):
                    continue
                fn = call.get("function")
                where = f"message {index}"
                if isinstance(fn, Mapping):  # OpenAI-style entry from additional_kwargs
                    args = arguments_of(
                        fn,
                        "arguments",
                        FUNCTION_KEYS,
                        where,
                        source,
                        outer=call,
                        outer_read=OPENAI_CALL_KEYS,
                    )
                    log.add(fn.get("name"), args, ref=call.get("id"), where=where)
                else:
                    args = arguments_of(call, "args", CALL_KEYS, where, source)
                    log.add(call.get("name"), args, ref=call.get("id"), where=where)
        elif kind == "tool":
            error = data.get("status") == "error"
            log.resolve(
                data.get("tool_call_id"),
                result_of(data.get("content")),
                error=error,
                name=data.get("name") if isinstance(data.get("name"), str) else None,
                refused=error and is_refusal(text_of(data.get("content"))),
            )
    if final_answer and last_kind == "ai" and not _tool_calls(last) and not _note(last):
        text = text_of(last.get("content"))
        if isinstance(text, str) and text.strip():
            log.final_answer(text)
    return log.trace()


def _note(data: Mapping[str, Any]) -> bool:
    """An AI message agentguard added (the refusal that ends a stopped turn)."""
    return not _tool_calls(data) and is_refusal(text_of(data.get("content")))


def _tool_calls(data: Mapping[str, Any]) -> list[Any]:
    calls = data.get("tool_calls")
    if isinstance(calls, list) and calls:
        return calls
    extra = data.get("additional_kwargs")
    legacy = extra.get("tool_calls") if isinstance(extra, Mapping) else None
    return list(legacy) if isinstance(legacy, list) else []
