"""MCP JSON-RPC message logs: tools/call requests joined with their responses."""

from __future__ import annotations

import json
from pathlib import Path

from agentguard.trace.formats import detect_format
from agentguard.trace.loaders import iter_trace_file

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
