"""Where the LangChain middleware checks a model turn: inside the model node, in O(new)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from agentguard.enforcement.approval import Approval, ApprovalRequest
from agentguard.guard import GuardSession
from agentguard.language import parse_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.integrations._adapter_specs import rules
from tests.integrations.adapters import AgentGuardMiddleware

DIALOGUE = parse_spec(
    "spec turns\n"
    "constraint answered := G(user_message -> F assistant_message)\n"
    'constraint kind severity SOFT_BLOCK(9) message "be kind" := G !final_answer(answer ~ /rude/)\n'
)


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order."""
    return f'{{"order_id": "{order_id}"}}'


def approve(request: ApprovalRequest) -> Approval:
    """An approver that says yes (the tests here only need one to be configured)."""
    del request
    return Approval(approved=True, by="test")


def test_the_guard_adds_no_graph_node_to_a_step() -> None:
    """Without an approver only before_agent and after_agent are added: one pair per
    invocation, none per model turn (each node costs LangGraph more than the check)."""
    agent = create_agent(ScriptedChatModel(["hi"]), [lookup_order], middleware=[])
    guarded = create_agent(
        ScriptedChatModel(["hi"]), [lookup_order], middleware=[AgentGuardMiddleware(rules())]
    )
    added = set(guarded.nodes) - set(agent.nodes)
    assert added == {"AgentGuardMiddleware.before_agent", "AgentGuardMiddleware.after_agent"}


def test_with_an_approver_the_turn_is_checked_in_a_node_of_its_own() -> None:
    """An approver may interrupt, and LangGraph re-runs the interrupted node on resume:
    the check is then its own node (after_model), so resuming never calls the model."""
    middleware = AgentGuardMiddleware(rules(), approver=approve)
    assert isinstance(middleware, AgentGuardMiddleware)
    assert middleware.name == "AgentGuardMiddleware"
    assert type(copy.copy(middleware)) is type(middleware)  # copy calls __new__ bare
    agent = create_agent(ScriptedChatModel(["hi"]), [lookup_order], middleware=[middleware])
    assert {"AgentGuardMiddleware.before_model", "AgentGuardMiddleware.after_model"} <= set(
        agent.nodes
    )
    out = agent.invoke({"messages": [HumanMessage("hello")]})
    assert out["messages"][-1].content == "hi"
    assert middleware.agentguard.trace.names == ("final_answer",)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_an_agent_without_tools_is_asked_again_after_a_refused_answer(use_async: bool) -> None:
    """No tools, no tool node, and the model node's edge leads only to the end: the refused
    answer is asked for again inside the node, with the refusal in the model's view."""
    model = ScriptedChatModel(["rude reply", "kind reply"])
    middleware = AgentGuardMiddleware(DIALOGUE)
    agent = create_agent(model, [], middleware=[middleware])
    task: Any = {"messages": [HumanMessage("hello")]}
    out = asyncio.run(agent.ainvoke(task)) if use_async else agent.invoke(task)
    texts = [str(m.content) for m in out["messages"]]
    assert texts[0] == "hello" and texts[1] == "rude reply" and texts[-1] == "kind reply"
    assert any(isinstance(m, HumanMessage) and m.name == "agentguard" for m in out["messages"])
    assert model.position == 2
    report = middleware.agentguard.report
    assert report is not None
    assert report.trace.names[-1] == "final_answer"
    assert [d.action.value for d in middleware.agentguard.attempts] == ["block", "allow"]


def test_every_user_turn_is_observed_once_over_many_turns() -> None:
    """Each model turn reads only the messages added since the last, and each user
    message and model message is in the trace once."""
    script: list[Any] = [call("lookup_order", order_id=f"A{i}") for i in range(5)]
    middleware = AgentGuardMiddleware(DIALOGUE)
    agent = create_agent(
        ScriptedChatModel([*script, "done"]), [lookup_order], middleware=[middleware]
    )
    agent.invoke({"messages": [HumanMessage("first"), HumanMessage("second")]})
    trace = middleware.agentguard.trace
    assert [c.args["text"] for c in trace if c.name == "user_message"] == ["first", "second"]
    assert len([c for c in trace if c.name == "assistant_message"]) == 6


@pytest.mark.parametrize("approver", [None, approve], ids=["in-model-node", "after-model"])
def test_turns_on_a_thread_observe_each_user_message_once(approver: Any) -> None:
    """Three invocations on one checkpointed thread: each user message is in the trace
    once, in order, though every invocation's history holds the earlier turns (the run
    document keeps how far the run has read the conversation)."""
    from langgraph.checkpoint.memory import InMemorySaver

    middleware = AgentGuardMiddleware(DIALOGUE, approver=approver)
    agent = create_agent(
        ScriptedChatModel(["a", "b", "c"]),
        [lookup_order],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "T"}}
    for text in ("one", "two", "three"):
        agent.invoke({"messages": [HumanMessage(text)]}, config)
    session = middleware.session_for("T")
    assert session is not None
    names = [c.name for c in session.trace]
    users = [c.args["text"] for c in session.trace if c.name == "user_message"]
    assert users == ["one", "two", "three"]
    assert names.count("assistant_message") == 3
    report = session.report
    assert report is not None and report.compliance.score == 1.0
    # a fresh middleware (another process) continuing the thread reads on from there too
    later = AgentGuardMiddleware(DIALOGUE, approver=approver)
    again = create_agent(
        ScriptedChatModel(["d"]),
        [lookup_order],
        middleware=[later],
        checkpointer=agent.checkpointer,
    )
    again.invoke({"messages": [HumanMessage("four")]}, config)
    resumed = later.session_for("T")
    assert resumed is not None
    assert [c.args["text"] for c in resumed.trace if c.name == "user_message"] == [
        "one",
        "two",
        "three",
        "four",
    ]


def test_a_rewritten_history_is_read_again_whole_without_repeating_events() -> None:
    """When the conversation changed behind the middleware's back (messages removed or
    replaced), the turn reads all of it again; already observed messages stay observed
    once, a new user message inserted earlier is observed."""
    from integrations._langchain_turns import Dialogue

    session = GuardSession(DIALOGUE)
    session.start_run()
    dialogue = Dialogue()
    first = [HumanMessage("one", id="h1"), AIMessage("a", id="a1")]
    dialogue.observe(session, first[:1], first[1:])
    rewritten = [HumanMessage("zero", id="h0"), *first, HumanMessage("two", id="h2")]
    dialogue.observe(session, rewritten, [AIMessage("b", id="a2")])
    appended = [*rewritten, AIMessage("b", id="a2"), HumanMessage("three", id="h3")]
    dialogue.observe(session, appended, [AIMessage("c", id="a3")])
    users = [c.args["text"] for c in session.trace if c.name == "user_message"]
    assert users == ["one", "zero", "two", "three"]
    assert [c.args["text"] for c in session.trace if c.name == "assistant_message"] == [
        "a",
        "b",
        "c",
    ]


@pytest.mark.parametrize("guard_first", [True, False], ids=["guard-first", "hitl-first"])
def test_a_human_edit_of_a_checked_call_is_what_runs_and_is_recorded(guard_first: bool) -> None:
    """With LangChain's HumanInTheLoopMiddleware beside the guard, whichever comes first:
    the model's call is checked at its turn, the human's edit where it runs, and the trace
    holds only what really ran. (Guard first, the edit used to be refused by the model's
    call's decision, or run unchecked when that one was allowed: issue 25.)"""
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    @tool
    def issue_refund(order_id: str, amount: float) -> str:
        """Issue a refund."""
        return f"refunded {amount}"

    spec = parse_spec(
        "spec s\nconstraint small severity SOFT_BLOCK(9) := G !issue_refund(amount > 100)\n"
    )
    guard = AgentGuardMiddleware(spec)
    human = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True})
    model = ScriptedChatModel([call("issue_refund", order_id="A", amount=500), "done"])
    agent = create_agent(
        model,
        [issue_refund],
        middleware=[guard, human] if guard_first else [human, guard],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("refund")]}, config)
    edited = {"name": "issue_refund", "args": {"order_id": "A", "amount": 50}}
    agent.invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]}), config)
    session = guard.session_for("t")
    assert session is not None
    attempts = [(d.action.value, dict(d.args).get("amount")) for d in session.attempts]
    # the human's edit replaced the model's call: that call is checked when it runs
    assert session.trace.names == ("issue_refund", "final_answer")
    assert session.trace[0].args["amount"] == 50
    assert attempts[:2] == [("block", 500), ("allow", 50)]
