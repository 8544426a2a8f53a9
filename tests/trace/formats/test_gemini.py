"""Google Gemini contents: functionCall parts joined with functionResponse parts."""

from __future__ import annotations

from agentguard.trace import detect_format, trace_from_json
from tests.trace.formats.conftest import fixture


def test_calls_join_responses_by_name_and_errors_are_marked() -> None:
    """functionResponse answers the oldest call of its name; an ``error`` response is a tool error."""
    log = fixture("gemini_log.json")
    assert detect_format(log) == "gemini"
    t = trace_from_json(log)
    assert t.names == ("lookup_order", "issue_refund", "notify", "final_answer")
    assert t[0].result == {"order_id": "A1", "total": 42.5}
    assert t[1].result == "refunded 10 on A1"
    assert t[2].result == "mailbox unavailable" and t.tool_errors == {2}
    assert t[3].args == {"answer": "Refunded 10 on A1; the notification failed."}


def test_python_sdk_spelling_with_ids() -> None:
    """The SDK's snake_case dump, with call ids, is read the same way."""
    contents = [
        {
            "role": "model",
            "parts": [{"function_call": {"id": "c1", "name": "a", "args": {"x": 1}}}],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"id": "c1", "name": "a", "response": {"v": 2}}}],
        },
    ]
    t = trace_from_json({"contents": contents})
    assert t.names == ("a",) and t[0].args == {"x": 1} and t[0].result == {"v": 2}
