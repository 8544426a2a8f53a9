"""OpenAI Responses API items joined by ``call_id``."""

from __future__ import annotations

from agentguard.trace import trace_from_json
from agentguard.trace.model import UNKNOWN
from tests.trace.formats.conftest import fixture


def test_items_join_outputs_by_call_id() -> None:
    """function_call items get the function_call_output with their call_id; a closing message is the answer."""
    t = trace_from_json(fixture("openai_responses_items.json"))
    assert t.names == ("lookup_order", "issue_refund", "final_answer")
    assert t[0].result == {"total": 42.5} and t[1].args == {"order_id": "A1", "amount": 10}
    assert t[1].result == "refunded 10 on A1"


def test_request_response_log() -> None:
    """A request's input items and the response's output items form one trace."""
    t = trace_from_json(fixture("openai_responses_log.json"))
    assert t.names == ("lookup_order", "issue_refund")
    assert t[1].result is UNKNOWN


def test_repeated_items_count_once() -> None:
    """A call fed back as the next request's input is not counted twice."""
    items = fixture("openai_responses_items.json")
    t = trace_from_json([*items[:3], *items[:3]])
    assert t.names == ("lookup_order",)


def test_custom_and_hosted_tool_calls() -> None:
    """custom_tool_call becomes name(input=...); an mcp_call with an error is a tool error."""
    items = [
        {"type": "custom_tool_call", "call_id": "c1", "name": "grep", "input": "TODO"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "3 hits"},
        {
            "type": "web_search_call",
            "id": "ws1",
            "status": "completed",
            "action": {"type": "search", "query": "refund policy"},
        },
        {
            "type": "mcp_call",
            "id": "m1",
            "server_label": "crm",
            "name": "get_customer",
            "arguments": '{"id": 7}',
            "output": None,
            "error": "not found",
        },
    ]
    t = trace_from_json(items)
    assert t.names == ("grep", "web_search", "get_customer")
    assert t[0].args == {"input": "TODO"} and t[0].result == "3 hits"
    assert t[1].args["query"] == "refund policy"
    assert t[2].args == {"id": 7} and t[2].result == "not found" and t.tool_errors == {2}
