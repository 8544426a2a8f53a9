"""Async LangChain runs: a call that waits for the calls it relied on waits off the event loop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import ToolException, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from agentguard.enforcement.decision import Action
from agentguard.language import load_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call

from ._offline import assert_online_is_offline
from .adapters import AgentGuardMiddleware, guard_tool_node

TIMEOUT = 20.0  # start_timeout: a blocked loop would hold the dependent call this long
RAN: list[str] = []
KNOWN = {"A"}  # the orders lookup finds


@tool
async def lookup(order_id: str) -> str:
    """Look an order up (slow); an unknown order is an error the model reads."""
    await asyncio.sleep(0.3)
    RAN.append("lookup")
    if order_id not in KNOWN:
        raise ToolException(f"no order {order_id}")
    return "found"


lookup.handle_tool_error = True  # the error becomes a ToolMessage(status="error")


@tool
async def refund(order_id: str) -> str:
    """Refund an order."""
    RAN.append("refund")
    return "refunded"


@tool
async def broken(order_id: str) -> str:
    """A tool that fails."""
    await asyncio.sleep(0.05)
    raise RuntimeError("the billing service is down")


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec.ltl"
    path.write_text("constraint verified := G(refund -> O lookup.ok)\n")
    return path


def batch(order_id: str) -> list[Any]:
    return [call("lookup", order_id=order_id), call("refund", order_id=order_id)]


def run_agent(middleware: AgentGuardMiddleware, script: list[Any]) -> float:
    """ainvoke the agent once; the seconds it took."""
    RAN.clear()
    agent = create_agent(
        ScriptedChatModel(script), [lookup, refund, broken], middleware=[middleware]
    )
    began = time.monotonic()
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("refund it")]}))
    return time.monotonic() - began


def test_a_dependent_call_waits_for_its_sibling_without_blocking_the_loop(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """[lookup (slow), refund]: refund waits for lookup's result, then runs; no timeout spent."""
    log = tmp_path / "run.jsonl"
    middleware = AgentGuardMiddleware(load_spec(spec_file), log_path=log, start_timeout=TIMEOUT)
    took = run_agent(middleware, [batch("A"), "refunded"])
    assert RAN == ["lookup", "refund"]
    assert took < TIMEOUT / 2
    session = middleware.agentguard
    assert session.trace.names == ("lookup", "refund", "final_answer")
    assert [d.action for d in session.attempts] == [Action.ALLOW] * 3
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_a_dependent_call_is_judged_on_its_siblings_real_result(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lookup fails: refund, re-checked on what ran, is refused and never runs."""
    log = tmp_path / "run.jsonl"
    middleware = AgentGuardMiddleware(load_spec(spec_file), log_path=log, start_timeout=TIMEOUT)
    took = run_agent(middleware, [batch("B"), "not refunded"])
    assert RAN == ["lookup"]
    assert took < TIMEOUT / 2
    session = middleware.agentguard
    assert session.trace.names == ("lookup", "final_answer")
    assert [d.tool for d in session.attempts if d.action is Action.BLOCK] == ["refund"]
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_a_tool_raising_beside_a_slow_sibling_ends_the_run_after_the_sibling(
    spec_file: Path, tmp_path: Path
) -> None:
    """The session is finished off the loop: the running sibling completes and is in the trace."""
    middleware = AgentGuardMiddleware(load_spec(spec_file), start_timeout=TIMEOUT)
    calls = [call("lookup", order_id="A"), call("broken", order_id="A")]
    with pytest.raises(RuntimeError, match="billing service is down"):
        run_agent(middleware, [calls, "done"])
    assert RAN == ["lookup"]
    session = middleware.agentguard
    assert sorted(session.trace.names) == ["broken", "lookup"]
    assert session.trace[session.trace.names.index("broken")].error


def test_a_tool_node_guard_waits_off_the_loop_too(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """guard_tool_node's async path: one message [lookup (slow), refund]; refund runs after lookup."""
    RAN.clear()
    log = tmp_path / "run.jsonl"
    guard = guard_tool_node(load_spec(spec_file), log_path=log, start_timeout=TIMEOUT)
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([lookup, refund], **guard.tool_node_kwargs()))
    graph.add_edge(START, "tools")
    calls = [
        {"name": "lookup", "args": {"order_id": "A"}, "id": "c1"},
        {"name": "refund", "args": {"order_id": "A"}, "id": "c2"},
    ]
    began = time.monotonic()
    out = asyncio.run(graph.compile().ainvoke({"messages": [AIMessage("", tool_calls=calls)]}))
    assert time.monotonic() - began < TIMEOUT / 2
    assert [m.content for m in out["messages"][1:]] == ["found", "refunded"]
    assert RAN == ["lookup", "refund"]
    report = guard.finish()
    assert report.trace.names == ("lookup", "refund")
    assert_online_is_offline(spec_file, report, log, capsys)
