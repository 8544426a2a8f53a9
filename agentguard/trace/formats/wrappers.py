"""Envelopes around a conversation: a request/response log line, a graph state, a
response object. Unwrapping yields the list of messages or items a format reads.

* ``{"messages": [...]}`` (chat request, LangGraph state, eval logs), optionally with
  ``"response"`` / ``"choices"``: the response's assistant message is appended;
* ``{"request": {"messages" | "input": [...]}, "response": {...}}``;
* a chat completion ``{"choices": [{"message": ...}]}`` or an Anthropic ``Message``
  (``{"type": "message", "role": "assistant", "content": [...]}``) alone;
* an OpenAI Responses request ``{"input": [...]}`` and/or response ``{"output": [...]}``;
* smolagents ``{"steps": [...]}``;
* Gemini ``{"contents": [...]}`` (a request) with an optional response whose first
  candidate's ``content`` is appended, or a response alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def unwrap(value: Any) -> list[Any] | None:
    """The inner list of a known envelope, or None when ``value`` is not one."""
    if not isinstance(value, Mapping):
        return None
    request = value.get("request")
    req: Mapping[str, Any] = request if isinstance(request, Mapping) else value
    response = value.get("response", value)
    messages = req.get("messages")
    reply = _response_message(response)
    if isinstance(messages, list):
        return [*messages, reply] if reply is not None else list(messages)
    items = _items(req, response)
    if items is not None:
        return items
    if reply is not None:
        return [reply]
    steps = value.get("steps")
    if isinstance(steps, list):
        return list(steps)
    return _contents(req, response)


def _contents(request: Mapping[str, Any], response: Any) -> list[Any] | None:
    """Gemini: the request's ``contents`` then the first candidate's ``content``."""
    contents = request.get("contents")
    candidates = response.get("candidates") if isinstance(response, Mapping) else None
    reply = None
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], Mapping):
        content = candidates[0].get("content")
        reply = content if isinstance(content, Mapping) else None
    if not isinstance(contents, list) and reply is None:
        return None
    out = list(contents) if isinstance(contents, list) else []
    return [*out, reply] if reply is not None else out


def _items(request: Mapping[str, Any], response: Any) -> list[Any] | None:
    """OpenAI Responses: the request's ``input`` items then the response's ``output``."""
    raw_input = request.get("input")
    output = response.get("output") if isinstance(response, Mapping) else None
    inputs = raw_input if isinstance(raw_input, list) else None
    outputs = output if isinstance(output, list) else None
    if inputs is None and outputs is None:
        return None
    if inputs is None and isinstance(raw_input, str):
        inputs = [{"role": "user", "content": raw_input}]
    return [*(inputs or []), *(outputs or [])]


def _response_message(response: Any) -> Mapping[str, Any] | None:
    """The assistant message of a chat completion (first choice) or an Anthropic Message."""
    if not isinstance(response, Mapping):
        return None
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        return message if isinstance(message, Mapping) else None
    if response.get("type") == "message" and response.get("role") == "assistant":
        return response
    return None
