"""Google Gemini ``contents``: ``model`` turns with ``functionCall`` parts joined with
``functionResponse`` parts (by ``id`` when given, else by name, oldest first).

Both the REST spelling (``functionCall``, ``functionResponse``) and the Python SDK's
``model_dump()`` spelling (``function_call``, ``function_response``) are read. The
API's convention for a response is ``{"output": ...}`` or ``{"error": ...}``: the
output alone becomes the result; an ``error`` without output is a tool error. The
final answer is the last turn when it is a ``model`` turn with text and no call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.trace.formats._base import CallLog, arguments_of, list_at, mappings
from agentguard.trace.model import Trace, decode_result

_CALL = ("functionCall", "function_call")
_RESPONSE = ("functionResponse", "function_response")
CALL_KEYS: Final = frozenset(
    {"id", "name", "args", "partialArgs", "partial_args", "willContinue", "will_continue"}
)
"""The keys of a ``FunctionCall`` (REST and SDK spellings)."""


def detect(value: Any) -> bool:
    """Items with a ``parts`` list (roles user/model/function/tool), some a function part."""
    return (
        mappings(value)
        and bool(value)
        and all(isinstance(c.get("parts"), list) and "content" not in c for c in value)
        and any(_part(p, _CALL + _RESPONSE) is not None for c in value for p in c["parts"])
    )


def _part(part: Any, keys: tuple[str, ...]) -> Mapping[str, Any] | None:
    if not isinstance(part, Mapping):
        return None
    for key in keys:
        inner = part.get(key)
        if isinstance(inner, Mapping):
            return inner
    return None


def load(value: Any, source: str, final_answer: bool) -> Trace:
    log = CallLog(source)
    for index, content in enumerate(value):
        for part in list_at(content, "parts", f"content {index}", source):
            call = _part(part, _CALL)
            if call is not None:
                where = f"content {index}"
                args = arguments_of(call, "args", CALL_KEYS, where, source)
                log.add(call.get("name"), args, ref=call.get("id"), where=where)
                continue
            reply = _part(part, _RESPONSE)
            if reply is not None:
                result, error = _result(reply.get("response"))
                name = reply.get("name") if isinstance(reply.get("name"), str) else None
                log.resolve(reply.get("id"), result, error=error, name=name)
    if final_answer and value and value[-1].get("role") == "model":
        parts = list_at(value[-1], "parts", "the last content", source)
        if not any(_part(p, _CALL) is not None for p in parts):
            texts = [
                p["text"]
                for p in parts
                if isinstance(p, Mapping) and isinstance(p.get("text"), str)
            ]
            if "".join(texts).strip():
                log.final_answer("".join(texts))
    return log.trace()


def _result(response: Any) -> tuple[Any, bool]:
    if isinstance(response, Mapping):
        if set(response) == {"output"}:
            return decode_result(response["output"]), False
        if "error" in response and "output" not in response:
            return decode_result(response["error"]), True
    return decode_result(response), False
