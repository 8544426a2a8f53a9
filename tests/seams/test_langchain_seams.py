"""Seams of the LangChain adapter: the trace is exactly what ran (issue 9)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from agentguard.language import parse_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call, call_with_id
from agentguard.trace.loaders import load_traces
from tests.integrations.adapters import AgentGuardMiddleware, guard_tool_node

RAN: list[str] = []
TIMES: dict[str, tuple[float, float]] = {}
SLOW = threading.Event()


@tool
def verify_identity(customer_id: int) -> str:
    """Verify a customer."""
    began = time.monotonic()
    if SLOW.is_set():
        time.sleep(0.3)
    if customer_id < 0:
        RAN.append("verify_identity!")
        raise RuntimeError(f"identity service rejected {customer_id}")
    RAN.append("verify_identity")
    TIMES["verify_identity"] = (began, time.monotonic())
    return json.dumps({"ok": True})


@tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    began = time.monotonic()
    RAN.append("issue_refund")
    TIMES["issue_refund"] = (began, time.monotonic())
    return json.dumps({"status": "ok"})


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    began = time.monotonic()
    if SLOW.is_set():
        time.sleep(0.2)
    RAN.append(f"lookup_order:{order_id}")
    TIMES[f"lookup_order:{order_id}"] = (began, time.monotonic())
    return json.dumps({"status": "ok", "order_id": order_id})


TOOLS = [verify_identity, issue_refund, lookup_order]

SPEC = parse_spec(
    """
spec seams
constraint verified_first severity SOFT_BLOCK(5)
  := G(issue_refund -> O verify_identity(result.ok = true))
"""
)


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()
    TIMES.clear()
    SLOW.clear()


def invoke(script: list[Any], **kw: Any) -> tuple[AgentGuardMiddleware, dict[str, Any]]:
    middleware = AgentGuardMiddleware(SPEC, **kw)
    agent = create_agent(ScriptedChatModel(script), TOOLS, middleware=[middleware])
    out = agent.invoke({"messages": [HumanMessage("refund A")]})
    return middleware, out


def test_a_call_the_tool_schema_rejects_is_withdrawn_not_executed(tmp_path: Path) -> None:
    """Arguments failing the tool's validation: the call never ran, so O verify is false."""
    log = tmp_path / "log.jsonl"
    middleware, _ = invoke(
        [
            call("verify_identity", customer_id="not a number"),
            call("issue_refund", order_id="A"),
            "done",
        ],
        log_path=log,
    )
    report = middleware.agentguard.report
    assert report is not None
    assert "verify_identity" not in report.trace.names
    assert "issue_refund" not in RAN
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["tool"] for e in events if e["event"] == "agentguard.withdrawn"] == [
        "verify_identity"
    ]


def test_a_batch_call_waits_for_the_call_its_approval_relied_on() -> None:
    """[slow verify, refund]: the refund body starts only after verify finished."""
    SLOW.set()
    middleware, _ = invoke(
        [[call("verify_identity", customer_id=1), call("issue_refund", order_id="A")], "done"]
    )
    assert TIMES["issue_refund"][0] >= TIMES["verify_identity"][1]
    assert middleware.agentguard.compliance.score == 1.0


def test_a_batch_call_is_refused_when_the_call_it_relied_on_raised() -> None:
    """[verify that raises, refund]: the refund never runs; verify is recorded with its error."""
    middleware = AgentGuardMiddleware(SPEC)
    agent = create_agent(
        ScriptedChatModel(
            [[call("verify_identity", customer_id=-1), call("issue_refund", order_id="A")], "x"]
        ),
        TOOLS,
        middleware=[middleware],
    )
    with pytest.raises(RuntimeError, match="rejected"):
        agent.invoke({"messages": [HumanMessage("refund A")]})
    assert "issue_refund" not in RAN
    assert middleware.running == ()
    report = middleware.agentguard.report
    assert report is not None
    assert [(c.name, c.error) for c in report.trace] == [("verify_identity", True)]


def test_raising_tools_leak_no_session_and_no_file(tmp_path: Path) -> None:
    """50 invocations whose tool raises: every session finished, every log closed."""
    middleware = AgentGuardMiddleware(SPEC, log_path=tmp_path / "log.jsonl")
    agent = create_agent(
        ScriptedChatModel([call("verify_identity", customer_id=-1)] * 50),
        TOOLS,
        middleware=[middleware],
    )
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        with pytest.raises(RuntimeError):
            agent.invoke({"messages": [HumanMessage("verify")]})
    assert middleware.running == ()
    assert len(os.listdir("/proc/self/fd")) <= before + 2
    events = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    finished = [e for e in events if e["event"] == "agentguard.finish"]
    results = [e for e in events if e["event"] == "agentguard.result"]
    assert len(finished) == 50 and len(results) == 50
    assert all(r["is_error"] for r in results)


def test_duplicate_tool_call_ids_in_one_turn_run_only_the_first() -> None:
    """Two calls sharing an id: the firewall refuses the second before anything runs."""
    _, out = invoke(
        [
            [
                call_with_id("X", "verify_identity", customer_id=1),
                call_with_id("X", "lookup_order", order_id="A"),
            ],
            "done",
        ]
    )
    assert RAN == ["verify_identity"]
    refusals = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(refusals) == 1 and "tool-call id" in str(refusals[0].content)


def test_independent_calls_of_a_batch_still_run_in_parallel() -> None:
    """Two lookups of one batch overlap in time."""
    SLOW.set()
    invoke([[call("lookup_order", order_id="A"), call("lookup_order", order_id="B")], "done"])
    a, b = TIMES["lookup_order:A"], TIMES["lookup_order:B"]
    assert a[0] < b[1] and b[0] < a[1]


def test_tool_node_guard_records_a_raising_tool_and_finishes(tmp_path: Path) -> None:
    """A hand-built graph: the raising call is recorded with its error, the log finished."""
    guard = guard_tool_node(SPEC, log_path=tmp_path / "log.jsonl")
    model = ScriptedChatModel([call("verify_identity", customer_id=-1)])

    def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent_node)
    graph.add_node("tools", ToolNode(TOOLS, **guard.tool_node_kwargs()))
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "tools")
    graph.add_edge("tools", END)
    with pytest.raises(RuntimeError):
        graph.compile().invoke({"messages": [HumanMessage("verify")]})
    assert not guard.agentguard.active
    assert [c.error for c in guard.agentguard.report.trace] == [True]
    loaded = load_traces(tmp_path / "log.jsonl")[0].trace
    assert loaded is not None and [c.error for c in loaded] == [True]
