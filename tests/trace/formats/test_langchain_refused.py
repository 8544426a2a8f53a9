"""A guarded LangChain agent's own transcript (``messages_to_dict`` of its final state, or
the same messages as OpenAI chat dicts) scored offline equals the guard's report: the
calls agentguard refused never ran and are not read back as calls."""

from __future__ import annotations

from typing import Any

import pytest

from agentguard.enforcement.approval import Approval, ApprovalRequest
from agentguard.trace import trace_from_json
from agentguard.trace.refusal import BLOCKED_HEAD, STOPPED_HEAD
from tests.trace.formats.refused_runs import assert_offline_equals_online

pytest.importorskip("langchain")
from langchain.agents import create_agent
from langchain_core.messages import convert_to_openai_messages, messages_to_dict
from langchain_core.tools import tool

from agentguard.testing.langchain_models import ScriptedChatModel, call
from integrations.langchain import AgentGuardMiddleware


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} verified"


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


@tool
def wipe() -> str:
    """Wipe the database."""
    return "wiped"


def run(spec: str, script: list[Any], **options: Any) -> tuple[list[Any], Any]:
    """The final state's messages and the report of one guarded invocation."""
    guard = AgentGuardMiddleware(spec, **options)
    agent = create_agent(ScriptedChatModel(script), [lookup, refund, wipe], middleware=[guard])
    out = agent.invoke({"messages": [("user", "yes, refund A")]})
    return out["messages"], guard.agentguard.report


def both(messages: list[Any]) -> list[Any]:
    """The transcript as LangChain writes it and as OpenAI chat messages."""
    return [messages_to_dict(messages), convert_to_openai_messages(messages)]


SOFT = """
constraint verified severity SOFT_BLOCK(5) := G(refund -> O lookup)
constraint confirm := G(refund -> O user_message(text ~ /yes/i))
constraint once := CalledN(refund, 1, <=)
"""


def test_soft_blocked_calls_are_left_out_with_dialogue_events_kept() -> None:
    """Refund, refused twice, lookup, refund: offline the trace is lookup, refund (and
    every message), as online; the refusals' assistant turns stay dialogue events."""
    script = [call("refund", order_id="A"), call("refund", order_id="A")]
    messages, report = run(SOFT, [*script, call("lookup", order_id="A"), script[0], "done"])
    assert [m.content.split("\n")[0] for m in messages if m.type == "tool"][:2] == [
        BLOCKED_HEAD,
        BLOCKED_HEAD,
    ]
    for transcript in both(messages):
        offline = assert_offline_equals_online(transcript, SOFT, report)
        assert [c.name for c in offline if c.is_tool] == ["lookup", "refund", "final_answer"]
        assert report.compliance.score == 1.0


def test_an_escalated_soft_block_stops_the_turn_and_no_answer_is_read() -> None:
    """SOFT_BLOCK(2): the third attempt becomes a stop; the turn ends with agentguard's
    note (an AI message), which is neither a model turn nor a final answer."""
    spec = "constraint verified severity SOFT_BLOCK(2) := G(refund -> O lookup)\n"
    messages, report = run(spec, [call("refund", order_id="A")] * 3 + ["never read"])
    assert report.stopped
    assert messages[-1].type == "ai" and messages[-1].content.startswith(STOPPED_HEAD)
    for transcript in both(messages):
        offline = assert_offline_equals_online(transcript, spec, report)
        assert offline.names == ()


def test_a_hard_stop_in_a_batch_withdraws_its_sibling() -> None:
    """lookup and wipe in one turn: wipe stops the run, lookup never runs (its reply says
    so); neither is read back, and the stop's note is no final answer."""
    spec = "constraint no_wipe severity HARD_STOP := G !wipe\n"
    messages, report = run(spec, [[call("lookup", order_id="A"), call("wipe")], "never read"])
    replies = [m for m in messages if m.type == "tool"]
    assert len(replies) == 2 and all(m.status == "error" for m in replies)
    assert [m.content.split("\n")[0] for m in replies] == [BLOCKED_HEAD, STOPPED_HEAD]
    for transcript in both(messages):
        assert assert_offline_equals_online(transcript, spec, report).names == ()


def test_block_and_warn_then_the_override_that_ran() -> None:
    """BLOCK_AND_WARN refuses once; the same call repeated runs as an override: the
    refusal is left out, the override is the one refund of the trace."""
    spec = "constraint careful severity BLOCK_AND_WARN := G !refund\n"
    messages, report = run(spec, [call("refund", order_id="A")] * 2 + ["done"])
    for transcript in both(messages):
        offline = assert_offline_equals_online(transcript, spec, report)
        assert offline.names == ("refund", "final_answer")


def test_a_denied_ask_is_left_out() -> None:
    """An ASK constraint put to an approver who denies: the refund never ran."""
    spec = "constraint approve severity ASK := G !refund\n"

    def deny(request: ApprovalRequest) -> Approval:
        return Approval(False, by="bob", reason="needs a manager")

    messages, report = run(
        spec, [call("refund", order_id="A"), call("lookup", order_id="A"), "done"], approver=deny
    )
    for transcript in both(messages):
        offline = assert_offline_equals_online(transcript, spec, report)
        assert offline.names == ("lookup", "final_answer")


def test_a_refused_final_answer_leaves_no_answer_and_no_user_turn() -> None:
    """The first answer is refused (agentguard's note is a HumanMessage named agentguard,
    a user message once converted): the model's text stays a dialogue event, the note is
    none, and the answer after the lookup is the run's final answer."""
    spec = (
        "constraint looked severity SOFT_BLOCK(5) := G(final_answer -> O lookup)\n"
        "constraint asked := G(lookup -> O user_message(text ~ /refund/))\n"
    )
    messages, report = run(spec, ["too early", call("lookup", order_id="A"), "done"])
    assert messages[2].name == "agentguard" and messages[2].content.startswith(BLOCKED_HEAD)
    for transcript in both(messages):
        offline = assert_offline_equals_online(transcript, spec, report)
        assert [c.name for c in offline if c.kind == "user"] == ["user_message"]
        assert [c.args["answer"] for c in offline if c.name == "final_answer"] == ["done"]


def test_arguments_the_tool_schema_rejects_are_left_out() -> None:
    """A refund without its order id never reaches the tool (agentguard withdraws it)."""
    spec = "constraint any := G true\n"
    messages, report = run(spec, [call("refund"), call("refund", order_id="A"), "done"])
    (rejected, _) = [m for m in messages if m.type == "tool"]
    assert rejected.content.startswith(BLOCKED_HEAD) and "arguments do not fit" in rejected.content
    for transcript in both(messages):
        offline = assert_offline_equals_online(transcript, spec, report)
        assert offline.names == ("refund", "final_answer")


def test_a_tool_error_that_quotes_the_marker_is_kept() -> None:
    """A ToolMessage with status error whose text only mentions the marker later, or a
    successful one that starts with it, is a call that ran."""
    quoted = f"upstream said:\n{BLOCKED_HEAD}"
    msgs = [
        {
            "type": "ai",
            "data": {
                "content": "",
                "tool_calls": [
                    {"id": "a", "name": "fetch", "args": {}},
                    {"id": "b", "name": "fetch", "args": {}},
                ],
            },
        },
        {"type": "tool", "data": {"content": quoted, "tool_call_id": "a", "status": "error"}},
        {
            "type": "tool",
            "data": {"content": BLOCKED_HEAD, "tool_call_id": "b", "status": "success"},
        },
    ]
    t = trace_from_json(msgs)
    assert [(c.name, c.result, c.error) for c in t] == [
        ("fetch", quoted, True),
        ("fetch", BLOCKED_HEAD, False),
    ]
    assert t.tool_errors == {0}
