"""AgentGuardMiddleware's one state key: the run document, checkpoints written before it,
and invocations that re-run the steps an ended invocation left."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.state import STATE_FORMAT
from agentguard.testing.langchain_models import ScriptedChatModel, Step, call
from tests.integrations.adapters import STATE_KEY, AgentGuardMiddleware, saved_firewall
from tests.integrations.test_langchain_sessions import refund_spec

CONFIG: Any = {"configurable": {"thread_id": "t"}}
WAIT = 20.0  # seconds an event waits before failing the test instead of hanging it


class Flaky:
    """Tools whose ``verify_identity`` raises the first ``failures`` times it runs."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.runs: list[str] = []

    def tools(self) -> list[BaseTool]:
        @tool
        def verify_identity(customer_id: str) -> str:
            """Verify the customer's identity."""
            self.runs.append(f"verify_identity {customer_id}")
            if self.failures > 0:
                self.failures -= 1
                raise ConnectionError("identity service unreachable")
            return f"verified {customer_id}"

        @tool
        def issue_refund(order_id: str, amount: float) -> str:
            """Issue a refund."""
            self.runs.append(f"issue_refund {order_id}")
            return f"refunded {amount} on {order_id}"

        return [verify_identity, issue_refund]


def agent(middleware: Any, script: list[Step], saver: Any, tools: Flaky | None = None) -> Any:
    chain = middleware if isinstance(middleware, list) else [middleware]
    return create_agent(
        ScriptedChatModel(script),
        (tools or Flaky()).tools(),
        middleware=chain,
        checkpointer=saver,
    )


def ask(graph: Any, text: str) -> dict[str, Any]:
    out: dict[str, Any] = graph.invoke({"messages": [HumanMessage(text)]}, CONFIG)
    return out


def bare_firewall_state(saver: InMemorySaver) -> dict[str, Any]:
    """Rewrite the thread's latest checkpoint in place as today's main wrote it before the
    run document: the bare ``Firewall.save()`` state under the key, no run token (the
    checkpoint id, its pending writes and the next nodes are unchanged)."""
    latest = saver.get_tuple(CONFIG)
    assert latest is not None and latest.parent_config is not None
    checkpoint = latest.checkpoint
    bare = saved_firewall(checkpoint["channel_values"])
    assert bare is not None and bare["format"] == STATE_FORMAT
    checkpoint["channel_values"][STATE_KEY] = bare
    version = checkpoint["channel_versions"][STATE_KEY]
    saver.put(latest.parent_config, checkpoint, latest.metadata, {STATE_KEY: version})
    rewritten = saver.get_tuple(CONFIG)
    assert rewritten is not None
    assert rewritten.checkpoint["id"] == checkpoint["id"]
    assert rewritten.checkpoint["channel_values"][STATE_KEY] == bare
    return bare


TURN_1: list[Step] = [call("verify_identity", customer_id="C1"), "verified"]
TURN_2: list[Step] = [call("issue_refund", order_id="A1", amount=5), "refunded"]


def test_the_guard_adds_one_private_state_key() -> None:
    """The schema adds agentguard_firewall only; it is absent from input and output."""
    added = set(AgentGuardMiddleware.state_schema.__annotations__) - set(AgentState.__annotations__)
    assert added == {STATE_KEY}
    out = ask(agent(AgentGuardMiddleware(refund_spec()), TURN_1, InMemorySaver()), "verify me")
    assert STATE_KEY not in out


def test_the_checkpoint_holds_the_run_document() -> None:
    """After a run the key holds the firewall state and no run token (it is spent)."""
    graph = agent(AgentGuardMiddleware(refund_spec()), TURN_1, InMemorySaver())
    ask(graph, "verify me")
    value = graph.get_state(CONFIG).values[STATE_KEY]
    assert value["format"] == "agentguard.langchain-run/1"
    assert value["run"] is None
    names = Firewall.restore(refund_spec(), value["firewall"]).trace.names
    assert names == ("verify_identity", "final_answer")


def test_while_running_the_checkpoint_names_the_run() -> None:
    """At an interrupt the checkpointed document carries the running invocation's token."""
    middleware = AgentGuardMiddleware(refund_spec())
    approval = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True})
    graph = agent([middleware, approval], [*TURN_2], InMemorySaver())
    assert "__interrupt__" in ask(graph, "refund")
    value = graph.get_state(CONFIG).values[STATE_KEY]
    assert isinstance(value["run"], str) and value["run"]
    assert middleware.running == (middleware.session_for("t"),)


class TestCheckpointsFromBeforeTheRunDocument:
    """A checkpoint holding the bare firewall state (today's main) restores and goes on."""

    def test_the_next_invocation_continues_the_trace(self) -> None:
        """Turn 2 on a thread checkpointed in the old format still sees turn 1's check."""
        saver = InMemorySaver()
        ask(agent(AgentGuardMiddleware(refund_spec()), TURN_1, saver), "verify me")
        bare_firewall_state(saver)
        middleware = AgentGuardMiddleware(refund_spec())
        out = ask(agent(middleware, TURN_2, saver), "now refund")
        assert out["messages"][-1].content == "refunded"
        assert not any(isinstance(m, ToolMessage) and m.status == "error" for m in out["messages"])
        session = middleware.session_for("t")
        assert session is not None
        assert session.trace.names == (
            "verify_identity",
            "final_answer",
            "issue_refund",
            "final_answer",
        )

    def test_an_interrupted_run_resumes_in_another_process(self) -> None:
        """A run interrupted under the old format resumes in a fresh middleware, trace kept."""
        saver = InMemorySaver()
        approval = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True})
        script: list[Step] = [call("verify_identity", customer_id="C1"), *TURN_2]
        first = agent([AgentGuardMiddleware(refund_spec()), approval], script, saver)
        assert "__interrupt__" in ask(first, "refund")
        bare = bare_firewall_state(saver)
        assert Firewall.restore(refund_spec(), bare).trace.names == ("verify_identity",)
        middleware = AgentGuardMiddleware(refund_spec())
        second = agent([middleware, approval], ["refunded"], saver)
        resume: Command[Any] = Command(resume={"decisions": [{"type": "approve"}]})
        out = second.invoke(resume, CONFIG)
        assert out["messages"][-1].content == "refunded"
        session = middleware.session_for("t")
        assert session is not None
        assert session.trace.names == ("verify_identity", "issue_refund", "final_answer")
        assert [(d.action.value, d.tool) for d in session.attempts] == [
            ("allow", "issue_refund"),
            ("allow", "final_answer"),
        ]


class TestEndedInvocations:
    """A tool that raises ends the invocation; the token in the checkpoint is spent then."""

    def test_rerunning_the_failed_step_begins_a_session(self) -> None:
        """invoke(None) after a tool raised re-runs the call in a session continued from
        the checkpoint, not in the ended one (which would refuse it)."""
        saver, tools = InMemorySaver(), Flaky(failures=1)
        middleware = AgentGuardMiddleware(refund_spec())
        graph = agent(middleware, [*TURN_1], saver, tools)
        with pytest.raises(ConnectionError):
            ask(graph, "verify me")
        ended = middleware.agentguard
        assert ended.closed
        assert ended.trace.names == ("verify_identity",)
        assert ended.trace.calls[0].error
        out = graph.invoke(None, CONFIG)
        assert out["messages"][-1].content == "verified"
        assert tools.runs == ["verify_identity C1", "verify_identity C1"]
        session = middleware.session_for("t")
        assert session is not None and session is not ended
        assert session.trace.names == ("verify_identity", "final_answer")
        assert not session.trace.calls[0].error

    def test_a_call_after_its_sibling_raised_is_refused(self) -> None:
        """A parallel call reaching its tool after its sibling's error ended the invocation
        is answered without running (its run already ended) and stays out of the trace.
        (The holding middleware sits inside the guard: one outside it that may handle a
        tool's error is refused, _langchain_order.)"""
        arrived, done = threading.Event(), threading.Event()
        replies: list[Any] = []

        class HoldRefund(AgentMiddleware[Any, Any, Any]):
            """Lets issue_refund reach its tool only after verify_identity's error ended
            the invocation (verify runs once the refund is held, so both have started)."""

            def wrap_tool_call(self, request: Any, handler: Any) -> Any:
                if request.tool_call["name"] == "verify_identity":
                    assert arrived.wait(WAIT)
                    return handler(request)
                arrived.set()
                deadline = time.monotonic() + WAIT
                while middleware.agentguard is idle or middleware.running:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
                try:
                    replies.append(handler(request))
                finally:
                    done.set()
                return replies[-1]

        tools = Flaky(failures=1)
        middleware = AgentGuardMiddleware(refund_spec())
        idle = middleware.agentguard
        turn = [
            call("verify_identity", customer_id="C1"),
            call("issue_refund", order_id="A1", amount=5),
        ]
        graph = agent([middleware, HoldRefund()], [turn, "done"], InMemorySaver(), tools)
        with pytest.raises(ConnectionError):
            ask(graph, "verify and refund")
        assert done.wait(WAIT)
        assert isinstance(replies[0], ToolMessage) and replies[0].status == "error"
        assert "already ended" in str(replies[0].content)
        assert tools.runs == ["verify_identity C1"]
        assert middleware.agentguard.trace.names == ("verify_identity",)
