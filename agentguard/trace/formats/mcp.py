"""MCP JSON-RPC message logs: ``tools/call`` requests joined with their responses by id.

A log of the messages between an MCP client and server (JSON lines or a JSON list, as a
transport logger or the MCP Inspector writes them) holds requests
``{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name", "arguments"}}``
and responses ``{"jsonrpc": "2.0", "id": 7, "result": {"content": [...], "isError": ...}}``.
Each ``tools/call`` is a call, in request order; its result is the response's
``CallToolResult`` unwrapped as the proxy unwraps it (:mod:`agentguard.trace.mcp_content`),
``isError`` marking a tool error. A request answered with a JSON-RPC ``error`` (unknown
tool, invalid params) never ran the tool and is left out, and so is one answered with
agentguard's refusal (``agentguard mcp-proxy``: an ``isError`` result whose one text block
starts with the marker line of :mod:`agentguard.trace.refusal`); a request with no response
yet keeps an unknown result. Other methods (``initialize``, ``tools/list``, notifications)
are skipped. The final answer is not part of MCP, so there is none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import CallLog, mappings
from agentguard.trace.mcp_content import mcp_result
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal

_CALL = "tools/call"


def detect(value: Any) -> bool:
    """JSON-RPC 2.0 messages, one of them a ``tools/call`` request."""
    return (
        mappings(value)
        and bool(value)
        and all(m.get("jsonrpc") == "2.0" for m in value)
        and any(m.get("method") == _CALL for m in value)
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    responses: dict[str, Mapping[str, Any]] = {}
    for message in value:
        if "method" not in message and "id" in message:
            responses.setdefault(_key(message["id"]), message)
    log = CallLog(source)
    for index, message in enumerate(value):
        if message.get("method") != _CALL or "id" not in message:
            continue
        params = message.get("params")
        if not isinstance(params, Mapping):
            raise TraceRecordError(f"message {index + 1}: tools/call has no params", source=source)
        response = responses.get(_key(message["id"]))
        if response is not None and ("error" in response or _refusal(response.get("result"))):
            continue  # refused by the server or by agentguard: the tool never ran
        slot = log.add(
            params.get("name"), params.get("arguments"), where=f"message {index + 1} tools/call"
        )
        if response is not None and "result" in response:
            result, error = mcp_result(response["result"])
            log.set_result(slot, result, error=error is True)
    return log.trace()


def _refusal(result: Any) -> bool:
    """The proxy's answer to a call it refused: an error result, one text block, the
    refusal marker first (``integrations/mcp.py``, ``refusal``)."""
    if not isinstance(result, Mapping) or result.get("isError") is not True:
        return False
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], Mapping):
        return False
    block = content[0]
    return block.get("type") == "text" and is_refusal(block.get("text"))


def _key(request_id: Any) -> str:
    """JSON-RPC ids are strings or numbers; ``7`` and ``"7"`` are different ids."""
    return f"{type(request_id).__name__}:{request_id}"


__all__ = ["detect", "load"]
