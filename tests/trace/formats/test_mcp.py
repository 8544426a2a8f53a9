"""MCP JSON-RPC message logs: tools/call requests joined with their responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.trace.formats import detect_format
from agentguard.trace.loaders import iter_trace_file
from agentguard.trace.mcp_content import CANCELLED_TEXT, jsonrpc_error_text

MESSAGES = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "x"}},
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "lookup_order", "arguments": {"order_id": "A1"}},
    },
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "no_such_tool", "arguments": {}},
    },
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Unknown tool"}},
    {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": '{"verified": true}'}], "isError": False},
    },
    {
        "jsonrpc": "2.0",
        "id": "3",
        "method": "tools/call",
        "params": {"name": "issue_refund", "arguments": {"order_id": "A1"}},
    },
    {
        "jsonrpc": "2.0",
        "id": "3",
        "result": {"content": [{"type": "text", "text": "declined"}], "isError": True},
    },
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "pending_call"}},
]


def test_a_jsonrpc_log_is_detected_as_mcp() -> None:
    """JSON-RPC 2.0 messages with a tools/call are the `mcp` format."""
    assert detect_format(MESSAGES) == "mcp"


def test_calls_joined_by_id_results_unwrapped_refused_ones_left_out(tmp_path: Path) -> None:
    """Responses join their request by id (out of order too); a JSON-RPC error means
    the tool never ran; isError marks a tool error; a call with no response is unknown."""
    path = tmp_path / "mcp.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in MESSAGES))
    (loaded,) = list(iter_trace_file(path))
    trace = loaded.trace
    assert trace is not None and loaded.format == "mcp"
    assert trace.names == ("lookup_order", "issue_refund", "pending_call")
    assert trace[0].result == {"verified": True} and not trace[0].error
    assert trace[1].result == "declined" and trace[1].error
    assert not trace[2].has_result
    assert trace.tool_errors == frozenset({1})


@pytest.mark.parametrize(
    ("error", "ran"),
    [
        ({"code": -32700, "message": "Parse error"}, False),
        ({"code": -32600, "message": "Invalid request"}, False),
        ({"code": -32601, "message": "Method not found"}, False),
        ({"code": -32602, "message": "no slot 9am"}, False),
        ({"code": -32603, "message": "ledger unavailable"}, True),
        ({"code": -32800, "message": "Request cancelled"}, True),
        ({"code": -32000, "message": "server busy"}, True),
        ({"code": 7, "message": "custom"}, True),
        ({"code": "-32602", "message": "a code that is not a number"}, True),
        ({"message": "no code"}, True),
        ("a bare string", True),
    ],
)
def test_a_jsonrpc_error_is_read_by_its_code(error: object, ran: bool, tmp_path: Path) -> None:
    """The codes of a request refused as it was read mean the tool never ran (left out);
    any other error may come from a tool that had begun: kept, with the error the MCP
    proxy gives it live (its text, the call marked as a tool error)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "charge"}},
        {"jsonrpc": "2.0", "id": 1, "error": error},
    ]
    path = tmp_path / "mcp.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in messages))
    (loaded,) = list(iter_trace_file(path))
    trace = loaded.trace
    assert trace is not None
    if not ran:
        assert trace.names == ()
        return
    assert trace.names == ("charge",) and trace[0].error
    code, message = (
        (error.get("code"), error.get("message")) if isinstance(error, dict) else (None, error)
    )
    assert trace[0].result == jsonrpc_error_text(code, message)


def test_a_cancelled_request_ran_with_the_cancellation_as_its_error(tmp_path: Path) -> None:
    """notifications/cancelled and no response: the request was sent, so it may have run
    (kept, the proxy's cancellation error on it); a response that came anyway wins."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "charge"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "id": "2", "method": "tools/call", "params": {"name": "charge"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "2"}},
        {"jsonrpc": "2.0", "id": "2", "result": {"content": [{"type": "text", "text": "done"}]}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "charge"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "3"}},
    ]
    path = tmp_path / "mcp.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in messages))
    (loaded,) = list(iter_trace_file(path))
    trace = loaded.trace
    assert trace is not None and trace.names == ("charge", "charge", "charge")
    assert trace[0].result == CANCELLED_TEXT and trace[0].error
    assert trace[1].result == "done" and not trace[1].error
    assert not trace[2].has_result  # "3" is not 3: that cancellation names another request


def test_a_request_answered_as_cancelled_reads_as_the_proxy_records_it(tmp_path: Path) -> None:
    """The SDK's streamable HTTP transport answers a cancelled request with -32800: the
    call ran, with the proxy's cancellation error (not the error code's text)."""
    messages = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "charge"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32800, "message": "Request cancelled"}},
    ]
    path = tmp_path / "mcp.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in messages))
    (loaded,) = list(iter_trace_file(path))
    assert loaded.trace is not None and loaded.trace.names == ("charge",)
    assert loaded.trace[0].result == CANCELLED_TEXT and loaded.trace[0].error


def test_an_id_used_again_pairs_each_request_with_its_own_answer(tmp_path: Path) -> None:
    """Found from outside: an id used again after its answer paired both requests with
    the first answer (the client's log scored otherwise than the live run). A response
    answers the oldest request of its id still unanswered before it; a cancellation
    names the one unanswered then."""

    def call(request_id: int, order: str) -> dict[str, object]:
        params = {"name": "lookup_order", "arguments": {"order_id": order}}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    def answer(request_id: int, text: str) -> dict[str, object]:
        result = {"content": [{"type": "text", "text": text}]}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    messages = [
        call(1, "ZZ"),
        answer(1, "no order ZZ"),
        cancel,  # nothing of id 1 is unanswered: it names no request
        call(1, "A1"),
        answer(1, "verified A1"),
    ]
    path = tmp_path / "mcp.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in messages))
    (loaded,) = list(iter_trace_file(path))
    trace = loaded.trace
    assert trace is not None
    assert [(c.args["order_id"], c.result) for c in trace] == [
        ("ZZ", "no order ZZ"),
        ("A1", "verified A1"),
    ]
    assert not any(c.error for c in trace)
