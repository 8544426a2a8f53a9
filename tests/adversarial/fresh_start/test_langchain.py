"""LangChain / LangGraph: a call that arrives after its run stopped or ended is refused and
logged by that run, never judged by a fresh firewall that forgot its counts and stops."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action, RunStopped
from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.adversarial._langchain_kit import Ran, assert_invariants, log_lines, spec_file
from tests.integrations.adapters import AgentGuardMiddleware, guard_tool_node

SPEC = """
spec at_most_one
constraint one_refund severity HARD_STOP := CalledN(refund, 1, <=)
"""

RAN: Ran = []
LOCK = threading.Lock()


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    time.sleep(0.05)  # the siblings overlap
    with LOCK:
        RAN.append(("refund", {"order_id": order_id}))
    return "refunded"


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    with LOCK:
        RAN.append(("lookup", {"order_id": order_id}))
    return "found"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _graph(guard: Any) -> Any:
    batch = AIMessage(
        content="",
        tool_calls=[
            {"name": "refund", "args": {"order_id": order}, "id": f"c{order}"}
            for order in ("A", "B", "C", "D")
        ],
    )

    def agent(state: MessagesState) -> dict[str, Any]:
        del state
        return {"messages": [batch]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([refund, lookup], **guard.tool_node_kwargs()))
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "tools")
    graph.add_edge("tools", END)
    return graph.compile()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_stop_in_a_parallel_batch_ends_the_run_for_every_sibling(
    tmp_path: Path, use_async: bool
) -> None:
    """Four refunds in one ToolNode batch under "at most one": one runs, the second is a
    STOP, and the siblings after it are refused by the stopped run (they used to start a
    fresh firewall each, and a second refund ran)."""
    spec = spec_file(tmp_path, SPEC)
    guard = guard_tool_node(spec[0], log_path=tmp_path / "d.jsonl")
    graph = _graph(guard)
    task = {"messages": [HumanMessage("refund everything")]}

    def run() -> Any:
        return asyncio.run(graph.ainvoke(task)) if use_async else graph.invoke(task)

    with pytest.raises(RunStopped):
        run()
    time.sleep(0.3)  # siblings still running when the stop left invoke
    assert len(RAN) == 1
    later = guard.agentguard.propose("refund", {"order_id": "E"})
    assert not later.executes
    report = guard.finish()
    assert_invariants(report, spec, RAN, tmp_path)
    lines = (tmp_path / "d.jsonl").read_text().splitlines()
    assert verify_lines(lines, require_finish=True).ok
    runs = {line["run_id"] for line in log_lines(tmp_path / "d.jsonl")}
    assert len(runs) == 1  # every refusal is on the stopped run's chain


def test_finish_is_the_explicit_boundary_of_a_hand_built_graph(tmp_path: Path) -> None:
    """After ``finish()`` the next call starts a new run (the caller marked the boundary);
    before it, a stopped run refuses."""
    spec = spec_file(tmp_path, SPEC)
    guard = guard_tool_node(spec[0])
    with pytest.raises(RunStopped):
        _graph(guard).invoke({"messages": [HumanMessage("refund")]})
    assert not guard.agentguard.propose("refund", {"order_id": "Z"}).executes
    guard.finish()
    assert guard.agentguard.propose("refund", {"order_id": "Y"}).executes


def test_a_sibling_reaching_its_tool_after_the_run_ended_is_refused(tmp_path: Path) -> None:
    """create_agent: a lookup raises and ends the invocation; a sibling refund held by an
    inner middleware until then reaches its tool afterwards: refused, not run (it used to
    have been allowed and started before it was held, and ran after the run ended)."""
    spec = spec_file(tmp_path, SPEC)
    arrived = threading.Event()
    replies: list[Any] = []

    @tool
    def flaky(order_id: str) -> str:
        """Look an order up (the service is down)."""
        raise ConnectionError("down")

    class Hold(AgentMiddleware[Any, Any, Any]):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            if request.tool_call["name"] == "flaky":
                assert arrived.wait(10)
                return handler(request)
            arrived.set()
            deadline = time.monotonic() + 10
            while guard.agentguard is idle or guard.running:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            replies.append(handler(request))
            return replies[-1]

    guard = AgentGuardMiddleware(spec[0], log_path=tmp_path / "d.jsonl")
    idle = guard.agentguard
    agent = create_agent(
        ScriptedChatModel([[call("flaky", order_id="A"), call("refund", order_id="A")], "done"]),
        [flaky, refund],
        middleware=[guard, Hold()],
    )
    with pytest.raises(ConnectionError):
        agent.invoke({"messages": [HumanMessage("refund A")]})
    deadline = time.monotonic() + 10
    while not replies and time.monotonic() < deadline:
        time.sleep(0.01)
    assert RAN == []
    assert replies and replies[0].status == "error" and "already ended" in replies[0].content
    assert [c.name for c in guard.agentguard.trace] == ["flaky"]
    assert guard.agentguard.report is not None


def test_a_call_of_an_ended_invocation_replayed_later_is_refused(tmp_path: Path) -> None:
    """A middleware inside the guard keeps the handler and request of a call and replays
    them after the invocation ended: refused by the ended run (the handler used to run
    the tool directly, unguarded)."""
    spec = spec_file(tmp_path, SPEC)
    kept: list[tuple[Any, Any]] = []

    class Keep(AgentMiddleware[Any, Any, Any]):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            kept.append((request, handler))
            return handler(request)

    guard = AgentGuardMiddleware(spec[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(
        ScriptedChatModel([call("lookup", order_id="A"), "done"]),
        [lookup, refund],
        middleware=[guard, Keep()],
    )
    agent.invoke({"messages": [HumanMessage("look A up")]})
    request, handler = kept[0]
    forged = {**request.tool_call, "args": {"order_id": "B"}}
    replayed = handler(request.override(tool_call=forged))
    assert RAN == [("lookup", {"order_id": "A"})]
    assert replayed.status == "error"
    report = guard.agentguard.report
    assert report is not None and [c.name for c in report.trace] == ["lookup", "final_answer"]
    refused = [e for e in log_lines(tmp_path / "d.jsonl") if e["event"] == "agentguard.decision"]
    assert refused[-1]["action"] == Action.BLOCK.value and "already ended" in refused[-1]["message"]


def test_a_call_naming_an_ended_invocation_is_not_begun_afresh(tmp_path: Path) -> None:
    """Without a thread there is no checkpoint to continue from: a tool call whose state
    names an invocation that ended is refused by that run and logged there (it used to
    begin a fresh session, whose empty firewall allowed it)."""
    from tests.integrations.adapters import STATE_KEY

    spec = spec_file(tmp_path, SPEC)
    kept: list[Any] = []

    class Keep(AgentMiddleware[Any, Any, Any]):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            kept.append(request)
            return handler(request)

    guard = AgentGuardMiddleware(spec[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(
        ScriptedChatModel([call("refund", order_id="A"), "done"]),
        [lookup, refund],
        middleware=[guard, Keep()],
    )
    agent.invoke({"messages": [HumanMessage("refund A")]})
    (request,) = kept
    assert request.state[STATE_KEY]["run"]  # the ended invocation's token
    again = {**request.tool_call, "id": "late", "args": {"order_id": "B"}}

    def run_tool(req: Any) -> Any:
        return req.tool.invoke({**req.tool_call, "type": "tool_call"})

    reply = guard.wrap_tool_call(request.override(tool_call=again), run_tool)
    assert reply.status == "error"
    assert RAN == [("refund", {"order_id": "A"})]
    assert guard.running == ()
    last = log_lines(tmp_path / "d.jsonl")[-1]
    assert last["event"] == "agentguard.decision" and last["action"] == "block"
