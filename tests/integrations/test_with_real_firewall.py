"""The adapters end to end with the real Firewall and real `.ltl` specs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool as lc_tool
from smolagents import CodeAgent, ToolCallingAgent, tool

from agentguard import parse_spec
from agentguard.enforcement.decision import RunStopped
from agentguard.guard import guard
from agentguard.testing import langchain_models as lc
from agentguard.testing.smolagents_models import ScriptedModel, call, if_observed
from tests.integrations.adapters import AgentGuardMiddleware

SPEC = parse_spec(
    """
spec refunds
tool lookup_order(order_id: str)
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str, amount: number)
tool delete_account()
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)
constraint answer_after_lookup severity SOFT_BLOCK(3)
    message "Look the order up before answering."
  := G(final_answer -> O lookup_order)
constraint cap severity BLOCK_AND_WARN
    message "Refunds above 500 need a second look."
  := G !issue_refund(amount > 500)
constraint never_delete severity HARD_STOP
    message "Accounts are never deleted by the agent."
  := G !delete_account
""",
    source="refunds.ltl",
)

RAN: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def lookup_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    RAN.append("lookup_order")
    return json.dumps({"order_id": order_id, "customer_id": "C-77", "amount": 40})


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def verify_identity(customer_id: str) -> str:
    """Verify a customer.

    Args:
        customer_id: The customer id.
    """
    RAN.append("verify_identity")
    return json.dumps({"customer_id": customer_id, "verified": True})


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order.

    Args:
        order_id: The order id.
        amount: The amount.
    """
    RAN.append("issue_refund")
    return json.dumps({"order_id": order_id, "refunded": amount})


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def delete_account() -> str:
    """Delete the account."""
    RAN.append("delete_account")
    return "deleted"


TOOLS = [lookup_order, verify_identity, issue_refund, delete_account]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def actions(session: Any) -> list[tuple[str, str]]:
    return [(d.action.value, d.tool) for d in session.attempts]


def test_tool_calling_agent_blocks_then_allows_after_correction(tmp_path: Path) -> None:
    """identity_first blocks the refund; after verify_identity the same refund runs."""
    refund = call("issue_refund", order_id="A1", amount=40)
    model = ScriptedModel(
        [
            refund,
            if_observed("BLOCKED", call("verify_identity", customer_id="C-77"), "x"),
            refund,
            call("final_answer", answer="too early"),
            call("lookup_order", order_id="A1"),
            call("final_answer", answer="refunded"),
        ]
    )
    agent = ToolCallingAgent(tools=TOOLS, model=model, verbosity_level=-1)
    guard(agent, SPEC, log_path=tmp_path / "log.jsonl")
    assert agent.run("refund A1") == "refunded"
    session = agent.agentguard
    assert actions(session) == [
        ("block", "issue_refund"),
        ("allow", "verify_identity"),
        ("allow", "issue_refund"),
        ("block", "final_answer"),
        ("allow", "lookup_order"),
        ("allow", "final_answer"),
    ]
    assert RAN == ["verify_identity", "issue_refund", "lookup_order"]
    assert session.trace.names == (
        "verify_identity",
        "issue_refund",
        "lookup_order",
        "final_answer",
    )
    assert session.compliance.score == 1.0
    assert session.log_path is not None
    assert session.log_path.read_text(encoding="utf-8").strip()


def test_code_agent_hard_stop_escapes_model_code() -> None:
    """A HARD_STOP constraint raises RunStopped through the model's try/except."""
    code = "try:\n    delete_account()\nexcept Exception:\n    print('swallowed')"
    agent = CodeAgent(tools=TOOLS, model=ScriptedModel([code]), verbosity_level=-1)
    guard(agent, SPEC)
    with pytest.raises(RunStopped):
        agent.run("task")
    assert RAN == []
    assert agent.agentguard.stopped
    assert agent.agentguard.report is not None


def test_block_and_warn_identical_retry_is_overridden() -> None:
    """An identical retry of a BLOCK_AND_WARN call is executed as an override."""
    big = call("issue_refund", order_id="A1", amount=900)
    model = ScriptedModel(
        [
            call("verify_identity", customer_id="C-77"),
            call("lookup_order", order_id="A1"),
            big,
            big,
            call("final_answer", answer="ok"),
        ]
    )
    agent = ToolCallingAgent(tools=TOOLS, model=model, verbosity_level=-1)
    guard(agent, SPEC)
    agent.run("task")
    assert actions(agent.agentguard)[2:4] == [
        ("block", "issue_refund"),
        ("allow_override", "issue_refund"),
    ]


def test_langchain_middleware_with_the_real_firewall() -> None:
    """create_agent + AgentGuardMiddleware: refusal as error ToolMessage, then compliance 1.0."""

    @lc_tool("issue_refund")
    def refund_tool(order_id: str, amount: float) -> str:
        """Refund an order."""
        RAN.append("issue_refund")
        return "ok"

    @lc_tool("verify_identity")
    def verify_tool(customer_id: str) -> str:
        """Verify a customer."""
        RAN.append("verify_identity")
        return "ok"

    @lc_tool("lookup_order")
    def lookup_tool(order_id: str) -> str:
        """Look up an order."""
        RAN.append("lookup_order")
        return '{"amount": 40}'

    refund = lc.call("issue_refund", order_id="A1", amount=40)
    model = lc.ScriptedChatModel(
        [
            refund,
            lc.if_observed("BLOCKED", lc.call("verify_identity", customer_id="C-77"), "x"),
            [refund, lc.call("lookup_order", order_id="A1")],
            "done",
        ]
    )
    middleware = AgentGuardMiddleware(SPEC)
    agent = create_agent(model, [refund_tool, verify_tool, lookup_tool], middleware=[middleware])
    out = agent.invoke({"messages": [HumanMessage("refund A1")]})
    refusal = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert refusal.status == "error"
    assert RAN[0] == "verify_identity"  # the batch's two independent calls run in parallel
    assert sorted(RAN[1:]) == ["issue_refund", "lookup_order"]
    assert middleware.agentguard.compliance.score == 1.0
