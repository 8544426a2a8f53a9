"""LangChain: a sub-agent invoked inside a tool of the guarded agent, built with the same
``AgentGuardMiddleware`` ("sub-agents as tools"), is part of the run whose tool called
it. It used to begin a session of its own, judged by a firewall that had forgotten the
run's counts: ``CalledN(refund, 1, <=)`` let the sub-agent refund a second time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action
from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.adversarial._langchain_kit import assert_invariants, spec_file
from tests.integrations.adapters import AgentGuardMiddleware

SPEC = """
spec subagents
constraint one_refund severity HARD_STOP := CalledN(refund, 1, <=)
constraint two_lookups severity SOFT_BLOCK(9) := CalledN(lookup, 2, <=)
"""


def _agents(
    tmp_path: Path, outer_script: list[Any], sub_script: list[Any]
) -> tuple[AgentGuardMiddleware, Any, list[tuple[str, dict[str, Any]]]]:
    ran: list[tuple[str, dict[str, Any]]] = []

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        ran.append(("refund", {"order_id": order_id}))
        return f"refunded {order_id}"

    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        ran.append(("lookup", {"order_id": order_id}))
        return f"order {order_id}"

    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    sub = create_agent(ScriptedChatModel(sub_script), [refund, lookup], middleware=[guard])

    @tool
    def ask_billing(request: str) -> str:
        """Delegate to the billing sub-agent."""
        out = sub.invoke({"messages": [HumanMessage(request)]})
        ran.append(("ask_billing", {"request": request}))
        return str(out["messages"][-1].content)

    @tool
    async def ask_billing_async(request: str) -> str:
        """Delegate to the billing sub-agent (async)."""
        out = await sub.ainvoke({"messages": [HumanMessage(request)]})
        ran.append(("ask_billing_async", {"request": request}))
        return str(out["messages"][-1].content)

    tools = [refund, lookup, ask_billing, ask_billing_async]
    outer = create_agent(ScriptedChatModel(outer_script), tools, middleware=[guard])
    return guard, outer, ran


def _invoke(agent: Any, use_async: bool) -> Any:
    task: Any = {"messages": [HumanMessage("go")]}
    config: Any = {"configurable": {"thread_id": "t1"}}
    return asyncio.run(agent.ainvoke(task, config)) if use_async else agent.invoke(task, config)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_sub_agents_call_is_judged_by_the_enclosing_run(tmp_path: Path, use_async: bool) -> None:
    """The outer agent refunds A, then its tool's sub-agent tries B: stopped by the run's
    "one refund" (it ran under a fresh firewall); the log holds one run."""
    delegate = "ask_billing_async" if use_async else "ask_billing"
    guard, outer, ran = _agents(
        tmp_path,
        [call("refund", order_id="A"), call(delegate, request="refund B"), "all done"],
        [call("refund", order_id="B"), "sub done"],
    )
    _invoke(outer, use_async)
    assert [r for r in ran if r[0] == "refund"] == [("refund", {"order_id": "A"})]
    session = guard.session_for("t1")
    assert session is not None
    stops = [d for d in session.report.decisions if d.action is Action.STOP]
    assert (stops[0].tool, stops[0].args) == ("refund", {"order_id": "B"})
    lines = (tmp_path / "d.jsonl").read_text().splitlines()
    assert len({json.loads(line)["run_id"] for line in lines}) == 1
    assert verify_lines(lines, require_finish=True).ok


def test_a_sub_agents_allowed_calls_are_the_runs_and_its_end_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sub-agent's lookup enters the run's trace (inside the delegating call) and
    counts: the outer agent's next lookup is the run's third, refused; the sub-agent's
    answer neither ends the run nor enters it as a final answer."""
    guard, outer, ran = _agents(
        tmp_path,
        [
            call("lookup", order_id="A"),
            call("ask_billing", request="look B up"),
            call("lookup", order_id="C"),
            "all done",
        ],
        [call("lookup", order_id="B"), "sub done"],
    )
    _invoke(outer, False)
    assert ran == [
        ("lookup", {"order_id": "A"}),
        ("lookup", {"order_id": "B"}),
        ("ask_billing", {"request": "look B up"}),
    ]
    report = guard.agentguard.report
    tools = [c.name for c in report.trace if c.is_tool]
    assert tools == ["lookup", "lookup", "ask_billing", "final_answer"]
    assert [d.action for d in report.decisions if d.tool == "lookup"][-1] is Action.BLOCK
    assert_invariants(report, spec_file(tmp_path, SPEC), ran, tmp_path, capsys, parallel=True)
