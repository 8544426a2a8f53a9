"""Anthropic Messages: assistant ``tool_use`` blocks joined with the user's
``tool_result`` blocks by ``tool_use_id``.

``is_error: true`` on a result marks the call as a tool error (the error text stays
the result), unless the text is agentguard's refusal (:mod:`agentguard.trace.refusal`: the
marker line first): then the call never ran and is left out. Server tools
(``server_tool_use`` with a ``*_tool_result`` block) are read the same way. The final
answer is the last assistant message when it has text and no ``tool_use``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import CallLog, arguments_of, mappings, result_of, text_of
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal

_USES = ("tool_use", "server_tool_use", "mcp_tool_use")
USE_KEYS: Final = frozenset(
    {"type", "id", "name", "input", "cache_control", "caller", "server_name"}
)
"""The keys of a ``tool_use`` block (``server_name`` on ``mcp_tool_use``, ``caller`` on a
call made by code execution)."""


def detect(value: Any) -> bool:
    """Role messages where some content block is a ``tool_use`` or ``tool_result``."""
    return (
        mappings(value)
        and bool(value)
        and all(m.get("role") in ("user", "assistant", "system") for m in value)
        and any(_blocks(m, lambda t: t in _USES or t.endswith("tool_result")) for m in value)
    )


def _blocks(message: Mapping[str, Any], test: Any) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and isinstance(b.get("type"), str) and test(b["type"])
        for b in content
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:
    log = CallLog(source)
    messages: Sequence[Any] = value
    for index, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise TraceRecordError(f"message {index} is not an object", source=source)
        content = msg.get("content")
        _turn(log, msg.get("role"), content)
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind in _USES:
                where = f"message {index} {kind}"
                args = arguments_of(block, "input", USE_KEYS, where, source)
                log.add(block.get("name"), args, ref=block.get("id"), where=where)
            elif isinstance(kind, str) and kind.endswith("tool_result"):
                content = block.get("content")
                flagged = block.get("is_error") is True
                log.resolve(
                    block.get("tool_use_id"),
                    result_of(content),
                    error=flagged or _is_error_content(content),
                    refused=flagged and is_refusal(text_of(content)),
                )
    if final_answer and messages and isinstance(messages[-1], Mapping):
        last = messages[-1]
        if last.get("role") == "assistant" and not _blocks(last, lambda t: t in _USES):
            text = text_of(last.get("content"))
            if isinstance(text, str) and text.strip():
                log.final_answer(text)
    return log.trace()


def _turn(log: CallLog, role: Any, content: Any) -> None:
    """The message's dialogue event: its text blocks only (a user message that only
    carries tool results is none), and how many tools an assistant message calls."""
    if isinstance(content, str):
        log.turn(role, content)
        return
    if not isinstance(content, list):
        return
    blocks = [b for b in content if isinstance(b, Mapping)]
    texts = [
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    uses = sum(1 for b in blocks if b.get("type") in _USES)
    if role == "assistant" or texts:
        log.turn(role, "\n".join(texts), uses)


def _is_error_content(content: Any) -> bool:
    """Server tool results report failure as a content object ``{"type": "*_error"}``."""
    return (
        isinstance(content, Mapping)
        and isinstance(content.get("type"), str)
        and content["type"].endswith("_error")
    )
