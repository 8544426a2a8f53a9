"""Anthropic Messages: tool_use blocks joined with tool_result blocks."""

from __future__ import annotations

from agentguard.trace import trace_from_json
from tests.trace.formats.conftest import fixture


def test_tool_use_joins_tool_result_and_marks_errors() -> None:
    """tool_result blocks (text or block lists) answer their tool_use; is_error marks the call."""
    t = trace_from_json(fixture("anthropic_log.json"))
    assert t.names == ("lookup_order", "lookup_order", "issue_refund", "final_answer")
    assert t[0].result == "no order missing" and t.tool_errors == {0}
    assert t[1].result == {"order_id": "A1", "total": 42.5}
    assert t[2].args == {"order_id": "A1", "amount": 10} and t[2].result == "refunded 10 on A1"
    assert t[3].args == {"answer": "Refunded 10 on A1."}
    assert (
        t.metrics["tool_errors"] == [0] and t.metrics["num_tool_calls"] == 3
    )  # the final answer is not counted


def test_bare_message_list_and_response_alone() -> None:
    """The request's message list alone, and a response Message alone, are read too."""
    log = fixture("anthropic_log.json")
    t = trace_from_json(log["request"]["messages"])
    assert t.names == ("lookup_order", "lookup_order", "issue_refund")
    response = {
        **log["response"],
        "content": [{"type": "tool_use", "id": "t9", "name": "search", "input": {"q": "x"}}],
    }
    assert trace_from_json(response).names == ("search",)
