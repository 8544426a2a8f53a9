"""OpenAI Responses API items: ``function_call`` (``call_id``, ``name``, ``arguments``)
joined with ``function_call_output`` by ``call_id``.

``custom_tool_call`` (free-text ``input``) becomes ``name(input=...)``. Built-in tools
(``web_search_call``, ``file_search_call``, ``code_interpreter_call``, ``mcp_call``, ...)
become calls named after the tool (``web_search``, the MCP tool's own name) with the
item's action, queries or code as arguments and its output/results as the result; an
``mcp_call`` with ``error`` is a tool error. An item repeated (a response's output fed
back as the next request's input) counts once. The final answer is the last item when
it is an assistant ``message``. A ``function_call_output`` whose text is agentguard's
refusal (:mod:`agentguard.trace.refusal`: the marker line first; what the OpenAI Agents SDK
adapter's ``reject_content`` sends) answers a call that never ran: the call is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.trace.formats._base import CallLog, arguments_of, mappings, result_of, text_of
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal

_CALL_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "function_call_output",
        "custom_tool_call_output",
        "reasoning",
    }
)
_META = frozenset(
    {
        "type",
        "id",
        "status",
        "call_id",
        "output",
        "outputs",
        "results",
        "error",
        "server_label",
        "approval_request_id",
        "container_id",
    }
)


FUNCTION_CALL_KEYS: Final = frozenset(
    {"type", "id", "call_id", "name", "arguments", "status", "namespace"}
)
"""The keys of a ``function_call`` item."""
MCP_CALL_KEYS: Final = _META | {"name", "arguments"}
"""The keys of an ``mcp_call`` item."""


def detect(value: Any) -> bool:
    """Items with a ``type`` of ``function_call`` / ``*_call`` / ``*_call_output``."""
    return mappings(value) and any(_is_call_item(item) for item in value)


def _is_call_item(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    return isinstance(kind, str) and (
        kind in _CALL_TYPES or kind.endswith(("_call", "_call_output"))
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:
    log = CallLog(source)
    done: set[str] = set()
    for index, item in enumerate(value):
        kind = item.get("type")
        where = f"item {index} {kind}"
        ref = item.get("call_id") or item.get("id")
        if kind in ("function_call", "custom_tool_call"):
            if log.seen(ref) or (ref is not None and str(ref) in done):
                continue
            args = (
                arguments_of(item, "arguments", FUNCTION_CALL_KEYS, where, source)
                if kind == "function_call"
                else {"input": item.get("input")}
            )
            log.add(item.get("name"), args, ref=ref, where=where)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            if str(ref) in done:
                continue
            output = item.get("output")
            refused = is_refusal(text_of(output))
            if log.resolve(ref, result_of(output), refused=refused) is not None:
                done.add(str(ref))
        elif isinstance(kind, str) and kind.endswith("_call") and not log.seen(ref):
            _builtin(log, item, kind, ref, where)
    if final_answer and value:
        last = value[-1]
        if last.get("type", "message") == "message" and last.get("role") == "assistant":
            text = text_of(last.get("content"))
            if isinstance(text, str) and text.strip():
                log.final_answer(text)
    return log.trace()


def _builtin(log: CallLog, item: Mapping[str, Any], kind: str, ref: Any, where: str) -> None:
    """A hosted tool call: the tool ran on the server, so call and result come together."""
    if kind == "mcp_call":
        args = arguments_of(item, "arguments", MCP_CALL_KEYS, where, log.source)
        slot = log.add(item.get("name"), args, ref=ref, where=where)
    else:
        action = item.get("action")
        args = (
            dict(action)
            if isinstance(action, Mapping)
            else {k: v for k, v in item.items() if k not in _META}
        )
        slot = log.add(kind.removesuffix("_call"), args, ref=ref, where=where)
    error = item.get("error")
    for key in ("output", "outputs", "results"):
        if item.get(key) is not None:
            log.set_result(slot, result_of(item[key]), error=bool(error))
            return
    if error:
        log.set_result(slot, error, error=True)
