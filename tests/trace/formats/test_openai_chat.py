"""OpenAI Chat Completions messages and request/response log lines."""

from __future__ import annotations

import pytest

from agentguard import TraceRecordError
from agentguard.trace import from_openai_messages, trace_from_json
from agentguard.trace.loaders import load_traces
from agentguard.trace.model import UNKNOWN
from tests.trace.formats.conftest import FIXTURES, fixture


def test_tool_calls_join_replies_by_id_and_text_parts() -> None:
    """Parallel tool calls get the reply with their id; list-of-parts content becomes text."""
    t = trace_from_json(fixture("openai_chat.json"))
    assert t.names == ("lookup_order", "issue_refund", "notify", "final_answer")
    assert t[0].args == {"order_id": "A1"} and t[0].result == {"order_id": "A1", "total": 42.5}
    assert t[1].result == "refunded 10 on A1" and t[2].result == "sent"
    assert t[3].args == {"answer": "Refunded 10 on A1."}


def test_arguments_as_object_are_accepted() -> None:
    """``function.arguments`` given as an object (not JSON text) is read as is."""
    msgs = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "1", "function": {"name": "a", "arguments": {"x": 1}}}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "42"},
    ]
    t = trace_from_json(msgs)
    assert t[0].args == {"x": 1} and t[0].result == 42


def test_legacy_function_call_joins_function_reply_by_name() -> None:
    """A legacy ``function_call`` is answered by the ``function`` message of that name."""
    t = trace_from_json(fixture("openai_chat_legacy.json"))
    assert t.names == ("lookup_order", "final_answer")
    assert t[0].result == {"total": 42.5}


def test_request_response_log_lines() -> None:
    """A log line's request messages continue with the response's message (the answer)."""
    loaded = load_traces(FIXTURES / "openai_chat_log.jsonl")
    assert [r.format for r in loaded] == ["openai-chat", "openai-chat"]
    first, second = (r.trace for r in loaded)
    assert first is not None and first.names[-1] == "final_answer"
    assert second is not None and second.names == ("lookup_order",)


def test_message_per_line_file_is_one_conversation() -> None:
    """A JSON-lines file holding one message per line is read as one conversation."""
    (loaded,) = load_traces(FIXTURES / "openai_chat_messages.jsonl")
    assert loaded.trace is not None and loaded.trace.names[-1] == "final_answer"


def test_classmethod_keeps_its_behaviour() -> None:
    """from_openai_messages adds no final answer unless asked; unanswered calls stay UNKNOWN."""
    msgs = [*fixture("openai_chat.json")[:3]]
    t = from_openai_messages(msgs)
    assert t.names == ("lookup_order",) and t[0].result is UNKNOWN
    full = fixture("openai_chat.json")
    assert from_openai_messages(full).names[-1] == "notify"
    assert from_openai_messages(full, final_answer=True).names[-1] == "final_answer"


def test_no_final_answer_when_disabled() -> None:
    """``final_answer=False`` leaves the closing text out of the trace."""
    t = trace_from_json(fixture("openai_chat.json"), final_answer=False)
    assert t.names == ("lookup_order", "issue_refund", "notify")


def test_call_without_name_is_an_error() -> None:
    """A tool call with no function name is a TraceRecordError naming the message."""
    with pytest.raises(TraceRecordError, match="message 0: tool call without a function name"):
        trace_from_json([{"role": "assistant", "tool_calls": [{"id": "1", "function": {}}]}])
