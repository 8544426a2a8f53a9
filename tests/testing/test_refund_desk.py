"""agentguard.testing.refund_desk: the examples' two tools in every framework, and the
model's mistake-then-correction script."""

from __future__ import annotations

import json

import pytest

from agentguard.testing.refund_desk import RefundDesk, refund_before_verifying
from agentguard.testing.script import Reaction, ScriptedCall, ScriptPlayer


def test_the_tools_answer_and_the_desk_records_each_refund() -> None:
    """verify_identity verifies; issue_refund refunds and is recorded, once per call."""
    desk = RefundDesk()
    verify, refund = desk.tools()
    assert json.loads(verify("C-77")) == {"customer_id": "C-77", "verified": True}
    assert json.loads(refund("A1", 5.0)) == {"order_id": "A1", "refunded": 5.0}
    assert desk.refunded == ["A1"]
    assert RefundDesk().refunded == []  # every desk has its own record


def test_smolagents_reads_the_tools_names_and_arguments() -> None:
    """smolagents' tool() accepts the functions: names, descriptions and typed inputs."""
    smolagents = pytest.importorskip("smolagents")
    verify, refund = (smolagents.tool(f) for f in RefundDesk().tools())
    assert (verify.name, refund.name) == ("verify_identity", "issue_refund")
    assert refund.inputs["amount"]["type"] == "number"
    assert refund.inputs["order_id"]["description"] == "The order number."
    assert json.loads(refund(order_id="A1", amount=2.5))["refunded"] == 2.5


def test_langchain_reads_the_tools_names_and_arguments() -> None:
    """LangChain's tool() accepts the functions: names and the argument schema."""
    tools = pytest.importorskip("langchain_core.tools")
    verify, refund = (tools.tool(f) for f in RefundDesk().tools())
    assert (verify.name, refund.name) == ("verify_identity", "issue_refund")
    assert set(refund.args) == {"order_id", "amount"}
    assert json.loads(refund.invoke({"order_id": "A1", "amount": 2.5}))["refunded"] == 2.5


def test_the_agents_sdk_reads_the_tools_names_and_arguments() -> None:
    """The OpenAI Agents SDK's function_tool() accepts them, with the docstring's arguments."""
    agents = pytest.importorskip("agents")
    verify, refund = (agents.function_tool(f) for f in RefundDesk().tools())
    assert (verify.name, refund.name) == ("verify_identity", "issue_refund")
    properties = refund.params_json_schema["properties"]
    assert properties["amount"]["description"] == "The amount in EUR."


def test_the_script_refunds_then_corrects_itself_only_when_blocked() -> None:
    """Refund; if the refusal says BLOCKED, verify (else refund again); refund; answer."""
    script = refund_before_verifying("done")
    refund = ScriptedCall("issue_refund", {"order_id": "A1042", "amount": 129.9})
    verify = ScriptedCall("verify_identity", {"customer_id": "C-77"})
    assert script[0] == refund == script[2]
    assert script[3] == "done"
    assert isinstance(script[1], Reaction)
    blocked: ScriptPlayer[object] = ScriptPlayer(script)
    assert [blocked.next_turn(s) for s in ("", "agentguard BLOCKED this call")] == [refund, verify]
    assert ScriptPlayer(script).next_turn("") == refund
    allowed: ScriptPlayer[object] = ScriptPlayer(script)
    allowed.next_turn("")
    assert allowed.next_turn('{"refunded": 129.9}') == refund
