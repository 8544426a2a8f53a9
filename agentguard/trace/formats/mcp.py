"""MCP JSON-RPC message logs: ``tools/call`` requests joined with their responses by id.

A log of the messages between an MCP client and server (JSON lines or a JSON list, as a
transport logger or the MCP Inspector writes them) holds requests
``{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name", "arguments"}}``
and responses ``{"jsonrpc": "2.0", "id": 7, "result": {"content": [...], "isError": ...}}``.
Each ``tools/call`` is a call, in request order; its result is the response's
``CallToolResult`` unwrapped as the proxy unwraps it (:mod:`agentguard.trace.mcp_content`),
``isError`` marking a tool error. A request answered with a JSON-RPC ``error`` whose code
says it was refused as it was read (invalid params, method not found...) never ran the
tool and is left out; one with another code (internal error, a server's own) may have run
and is kept, with the error the MCP proxy gives it live
(:func:`~agentguard.trace.mcp_content.rejected_request`). A request the client cancelled
(``notifications/cancelled``) with no response is kept as a call that ran, with the
proxy's cancellation error. A request answered with agentguard's refusal is left out too
(``agentguard mcp-proxy``: an ``isError`` result whose one text block starts with the
marker line of :mod:`agentguard.trace.refusal`); a request with no response yet keeps an
unknown result. A call's arguments are those the server acted on: the client's, with
the defaults of the tool's ``inputSchema`` filled in, from the ``tools/list`` results
the log holds before the call (:mod:`agentguard.trace.mcp_arguments`, the proxy's rule).
A ``resources/read`` is a call too, of the name ``resources/read`` with the argument
``uri`` (:data:`~agentguard.trace.mcp_content.RESOURCE_READ`, as the proxy judges it), its
result the read's contents unwrapped; one the proxy refused (a JSON-RPC error whose
message is the refusal) is left out. Other methods (``initialize``, ``tools/list``,
notifications) are skipped. The final answer is not part of MCP, so there is none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import CallLog, arguments_of, mappings
from agentguard.trace.mcp_arguments import server_arguments
from agentguard.trace.mcp_content import (
    CANCELLED_TEXT,
    RESOURCE_READ,
    jsonrpc_error_text,
    mcp_result,
    read_arguments,
    rejected_request,
    unwrap_read_resource_result,
)
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal

_CALL = "tools/call"
_LIST = "tools/list"
PARAMS_KEYS: Final = frozenset({"name", "arguments", "_meta", "task"})
"""The keys of ``tools/call`` params (``CallToolRequestParams``)."""
_CANCELLED = "notifications/cancelled"


def detect(value: Any) -> bool:
    """JSON-RPC 2.0 messages, one of them a ``tools/call`` request."""
    return (
        mappings(value)
        and bool(value)
        and all(m.get("jsonrpc") == "2.0" for m in value)
        and any(m.get("method") in (_CALL, RESOURCE_READ) for m in value)
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    answers, cancelled, listing_answers = _pairs(value)
    log = CallLog(source)
    schemas: dict[str, Any] = {}  # tool name -> inputSchema, as last listed
    for index, message in enumerate(value):
        if index in listing_answers:
            _learn(schemas, message.get("result"))
            continue
        method = message.get("method")
        if method not in (_CALL, RESOURCE_READ) or "id" not in message:
            continue
        params = message.get("params")
        if not isinstance(params, Mapping):
            raise TraceRecordError(f"message {index + 1}: {method} has no params", source=source)
        response = answers.get(index)
        failure = _failure(response)
        if failure is not None and (rejected_request(failure[0]) or is_refusal(failure[1])):
            continue  # refused as the request was read (by the server, or agentguard's read)
        if failure is None and response is not None and _refusal(response.get("result")):
            continue  # refused by agentguard: never sent to the server
        where = f"message {index + 1} {method}"
        if method == RESOURCE_READ:
            name: Any = RESOURCE_READ
            uri = params.get("uri")
            args: dict[str, Any] = read_arguments(uri) if isinstance(uri, str) else {"uri": uri}
        else:
            args = arguments_of(params, "arguments", PARAMS_KEYS, where, source)
            name = params.get("name")
            if isinstance(name, str):  # the arguments as the server acted on them
                args = server_arguments(schemas.get(name), args).args
        slot = log.add(name, args, where=where)
        if failure is not None:
            log.set_result(slot, jsonrpc_error_text(*failure), error=True)
        elif response is not None and "result" in response and method == RESOURCE_READ:
            log.set_result(slot, unwrap_read_resource_result(response["result"]))
        elif response is not None and "result" in response:
            result, error = mcp_result(response["result"])
            log.set_result(slot, result, error=error is True)
        elif response is None and index in cancelled:  # sent, then given up on: it may have run
            log.set_result(slot, CANCELLED_TEXT, error=True)
    return log.trace()


def _pairs(value: Sequence[Mapping[str, Any]]) -> tuple[dict[int, Any], set[int], set[int]]:
    """Each request's response (by message index): the first response with its id after
    it, not an earlier request's (an id used again after its answer is another request);
    the requests the client cancelled while unanswered; the responses to tools/list."""
    unanswered: dict[str, list[int]] = {}  # id -> requests waiting, oldest first
    answers: dict[int, Any] = {}
    cancelled: set[int] = set()
    listing_answers: set[int] = set()
    for index, message in enumerate(value):
        if "method" not in message and "id" in message:
            waiting = unanswered.get(_key(message["id"]))
            if waiting:
                request = waiting.pop(0)
                answers[request] = message
                if value[request].get("method") == _LIST:
                    listing_answers.add(index)
        elif message.get("method") == _CANCELLED:
            params = message.get("params")
            if isinstance(params, Mapping) and "requestId" in params:
                waiting = unanswered.get(_key(params["requestId"]))
                cancelled.update(waiting[:1] if waiting else ())
        elif "method" in message and "id" in message:
            unanswered.setdefault(_key(message["id"]), []).append(index)
    return answers, cancelled, listing_answers


def _learn(schemas: dict[str, Any], result: Any) -> None:
    """The input schemas a ``tools/list`` result lists (a page updates those it names)."""
    tools = result.get("tools") if isinstance(result, Mapping) else None
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            schemas[tool["name"]] = tool.get("inputSchema")


def _failure(response: Mapping[str, Any] | None) -> tuple[Any, Any] | None:
    """``(code, message)`` of a JSON-RPC error response; None for any other."""
    if response is None or "error" not in response:
        return None
    error = response["error"]
    if isinstance(error, Mapping):
        return error.get("code"), error.get("message")
    return None, error


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
