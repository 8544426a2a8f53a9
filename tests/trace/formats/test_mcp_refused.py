"""The JSON-RPC transcript of a session through ``agentguard mcp-proxy`` (what a transport
logger or the MCP Inspector records) scored offline equals the proxy's own report: a call
the proxy refused is answered with an ``isError`` result carrying the refusal, never
reached the server, and is not read back as a call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentguard import verify_trace
from agentguard.trace import trace_from_json
from agentguard.trace.refusal import BLOCKED_HEAD, STOPPED_HEAD
from tests.trace.formats.refused_runs import calls_of

pytest.importorskip("mcp")
from tests.integrations.test_mcp_gateway import SPEC, Run, through_proxy

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("issue_refund", {"order_id": "A1", "amount": 5}),  # SOFT_BLOCK: no lookup yet
    ("lookup_order", {"order_id": "A1"}),
    ("issue_refund", {"order_id": "A1", "amount": "ten"}),  # the tool's schema refuses it
    ("no_such_tool", {}),  # unknown tool: refused before the server
    ("issue_refund", {"order_id": "A1", "amount": 5}),
    ("wipe_database", {}),  # HARD_STOP
    ("lookup_order", {"order_id": "A1"}),  # the session is stopped
]


def transcript(results: list[Any]) -> list[dict[str, Any]]:
    """The session's JSON-RPC messages: each request and the result as it went on the wire."""
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 0, "result": {}},
    ]
    for n, ((name, args), result) in enumerate(zip(CALLS, results, strict=True), start=1):
        params = {"name": name, "arguments": args}
        messages.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        messages.append({"jsonrpc": "2.0", "id": n, "result": wire})
    return messages


def test_a_proxy_session_transcript_scores_as_the_proxy_did(tmp_path: Path) -> None:
    """SOFT_BLOCK, schema and unknown-tool refusals, a HARD_STOP and a call after it are
    left out; what reached the server is the trace, and the score is the proxy's."""
    run = Run(tmp_path)

    async def scenario() -> list[Any]:
        async with through_proxy(run) as client:
            return [await client.call_tool(name, args) for name, args in CALLS]

    results = anyio.run(scenario)
    heads = [r.content[0].text.split("\n")[0] for r in results if r.is_error]
    assert heads == [BLOCKED_HEAD, BLOCKED_HEAD, BLOCKED_HEAD, STOPPED_HEAD, STOPPED_HEAD]
    (report,) = run.reports()
    messages = transcript(results)
    offline = trace_from_json(messages)
    assert calls_of(offline) == calls_of(trace_from_json(report))
    assert offline.names == tuple(c["tool"] for c in run.reached_server())
    assert offline.metrics["num_tool_calls"] == 2
    scored, online = verify_trace(messages, SPEC), report["compliance"]
    assert scored.score == online["compliance_score"]
    assert [(c.name, c.passed) for c in scored.constraints] == [
        (c["name"], c["passed"]) for c in online["constraints"]
    ]


def test_a_tool_error_that_quotes_the_marker_later_is_kept() -> None:
    """A server's own error result mentioning the marker after its first line ran."""
    quoted = f"upstream failed:\n{BLOCKED_HEAD}"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "f"}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": quoted}], "isError": True},
        },
    ]
    t = trace_from_json(messages)
    assert [(c.name, c.result, c.error) for c in t] == [("f", quoted, True)]
