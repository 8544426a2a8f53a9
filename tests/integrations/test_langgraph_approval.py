"""ASK in LangGraph: a real interrupt holds the call; Command(resume=...) carries the answer."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agentguard.enforcement.decision import Action
from agentguard.language import parse_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call
from integrations.langchain import AgentGuardMiddleware, interrupt_approver

SPEC = parse_spec(
    "spec approvals\n"
    "constraint big_refund severity ASK\n"
    '    message "Refunds above 500 need a human."\n'
    "  := G !issue_refund(amount > 500)\n"
)
RAN: list[str] = []


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund."""
    RAN.append(f"refund {amount}")
    return "refunded"


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    RAN.append("lookup")
    return "found"


def agent(middleware: AgentGuardMiddleware, script: list[Any]) -> Any:
    return create_agent(
        ScriptedChatModel(script),
        [issue_refund, lookup_order],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )


def test_approved_after_resume_the_call_runs_and_is_logged_as_approved() -> None:
    """invoke() stops at the interrupt (nothing ran); resume approves; the refund runs."""
    RAN.clear()
    middleware = AgentGuardMiddleware(SPEC, approver=interrupt_approver)
    graph = agent(middleware, [call("issue_refund", order_id="A1", amount=900), "done"])
    config: Any = {"configurable": {"thread_id": "t1"}}
    out = graph.invoke({"messages": [HumanMessage("refund 900")]}, config)
    (pending,) = out["__interrupt__"]
    assert pending.value["agentguard"] == "approval"
    assert pending.value["tool"] == "issue_refund"
    assert [v["constraint"] for v in pending.value["violations"]] == ["big_refund"]
    assert RAN == []
    out = graph.invoke(Command(resume={"approved": True, "by": "alice"}), config)
    assert out["messages"][-1].content == "done"
    assert RAN == ["refund 900.0"]
    session = middleware.session_for("t1")
    assert session is not None
    assert session.trace.names == ("issue_refund", "final_answer")
    (approved,) = [d for d in session.attempts if d.action is Action.OVERRIDE]
    assert approved.approval is not None and approved.approval["by"] == "alice"


def test_denied_after_resume_the_model_reads_the_reason() -> None:
    """Resuming with a denial refuses the call; its ToolMessage carries the reason."""
    RAN.clear()
    middleware = AgentGuardMiddleware(SPEC, approver=interrupt_approver)
    script: list[Any] = [
        [call("lookup_order", order_id="A1"), call("issue_refund", order_id="A1", amount=900)],
        "not refunded",
    ]
    graph = agent(middleware, script)
    config: Any = {"configurable": {"thread_id": "t2"}}
    out = graph.invoke({"messages": [HumanMessage("refund 900")]}, config)
    assert "__interrupt__" in out and RAN == []
    resume = {"approved": False, "by": "bob", "reason": "needs a manager"}
    out = graph.invoke(Command(resume=resume), config)
    assert RAN == ["lookup"]  # the sibling was proposed again and ran; the refund did not
    refused = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(refused) == 1 and "needs a manager" in str(refused[0].content)
    session = middleware.session_for("t2")
    assert session is not None
    assert session.trace.names == ("lookup_order", "final_answer")
