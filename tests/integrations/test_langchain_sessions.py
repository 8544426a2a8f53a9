"""AgentGuardMiddleware: one session per invocation (concurrent runs) and per-thread resumption."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import PrivateAttr

from agentguard import Spec
from agentguard.enforcement.firewall import Firewall
from agentguard.testing.langchain_models import ScriptedChatModel, Step, call
from tests.integrations._adapter_specs import rules
from tests.integrations.adapters import STATE_KEY, AgentGuardMiddleware, saved_firewall

RUNS = 4
WAIT = 20.0  # seconds a barrier waits before failing the test instead of hanging it


def refund_spec() -> Spec:
    """Refunds need the identity verified earlier in the same run."""
    return rules(requires={"issue_refund": "verify_identity"})


class PerTaskModel(BaseChatModel):
    """Routes each conversation to its own script, chosen by its first user message, so
    concurrent invocations of one agent each replay their own script."""

    _scripts: dict[str, ScriptedChatModel] = PrivateAttr(default_factory=dict)

    def __init__(self, scripts: dict[str, Sequence[Step]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._scripts = {task: ScriptedChatModel(steps) for task, steps in scripts.items()}

    @property
    def _llm_type(self) -> str:
        return "agentguard-per-task"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> PerTaskModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        task = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        return self._scripts[task]._generate(messages, stop, **kwargs)


def scripts() -> dict[str, Sequence[Step]]:
    """Even customers verify their identity, odd ones do not; all meet inside lookup_order."""
    out: dict[str, Sequence[Step]] = {}
    for i in range(RUNS):
        verify = [call("verify_identity", customer_id=f"C{i}")] if i % 2 == 0 else []
        out[f"refund A{i}"] = [
            *verify,
            call("lookup_order", order_id=f"A{i}"),
            call("issue_refund", order_id=f"A{i}", amount=5),
            f"done A{i}",
        ]
    return out


def sync_tools(barrier: threading.Barrier) -> list[BaseTool]:
    @tool
    def verify_identity(customer_id: str) -> str:
        """Verify the customer's identity."""
        return f"verified {customer_id}"

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order (waits until every invocation is inside it)."""
        barrier.wait(WAIT)
        return f"order {order_id}"

    @tool
    def issue_refund(order_id: str, amount: float) -> str:
        """Issue a refund."""
        return f"refunded {amount} on {order_id}"

    return [verify_identity, lookup_order, issue_refund]


class AsyncBarrier:
    """Lets ``parties`` coroutines through together (``asyncio.Barrier`` is 3.11+)."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.open = asyncio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived == self.parties:
            self.open.set()
        await asyncio.wait_for(self.open.wait(), WAIT)


def async_tools(barrier: AsyncBarrier) -> list[BaseTool]:
    @tool("lookup_order")
    async def lookup_order(order_id: str) -> str:
        """Look up an order (waits until every invocation is inside it)."""
        await barrier.wait()
        return f"order {order_id}"

    verify_identity, _, issue_refund = sync_tools(threading.Barrier(1))
    return [verify_identity, lookup_order, issue_refund]


def check_isolated(outputs: list[dict[str, Any]]) -> None:
    """Odd customers' refunds are blocked although even ones verified at the same time."""
    for i, out in enumerate(outputs):
        refusals = [
            m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"
        ]
        assert out["messages"][-1].content == f"done A{i}"
        if i % 2 == 0:
            assert refusals == []
        else:
            assert [m.name for m in refusals] == ["issue_refund"]
            assert "verify_identity first" in str(refusals[0].content)


def orders_in(trace: Any) -> set[str]:
    return {str(c.args.get("order_id")) for c in trace.calls if "order_id" in c.args}


class TestConcurrentInvocations:
    @pytest.mark.parametrize("with_threads", [True, False], ids=["thread_id", "no_thread_id"])
    def test_threads_share_one_agent_without_mixing_traces(
        self, with_threads: bool, tmp_path: Path
    ) -> None:
        """Four invoke() calls in threads overlap inside a tool; each keeps its own trace."""
        log = tmp_path / "decisions.jsonl"
        middleware = AgentGuardMiddleware(refund_spec(), log_path=log)
        agent = create_agent(
            PerTaskModel(scripts()), sync_tools(threading.Barrier(RUNS)), middleware=[middleware]
        )

        def one(i: int) -> dict[str, Any]:
            config: Any = {"configurable": {"thread_id": f"t{i}"}} if with_threads else None
            result: dict[str, Any] = agent.invoke(
                {"messages": [HumanMessage(f"refund A{i}")]}, config
            )
            return result

        with ThreadPoolExecutor(RUNS) as pool:
            outputs = list(pool.map(one, range(RUNS)))
        check_isolated(outputs)
        assert middleware.running == ()
        assert middleware.agentguard.report is not None
        events = [json.loads(line) for line in log.read_text().splitlines()]
        assert len({e["run_id"] for e in events}) == RUNS
        assert sum(e["action"] == "finish" for e in events) == RUNS
        if not with_threads:
            return
        for i in range(RUNS):
            session = middleware.session_for(f"t{i}")
            assert session is not None
            assert session.report is not None
            assert orders_in(session.trace) == {f"A{i}"}
            expected = ["lookup_order", "final_answer"]
            if i % 2 == 0:
                expected = ["verify_identity", "lookup_order", "issue_refund", "final_answer"]
            assert list(session.trace.names) == expected
            assert session.report.compliance.score == 1.0

    def test_asyncio_gather_of_ainvoke_keeps_traces_apart(self) -> None:
        """Four ainvoke() tasks interleave on one loop; each keeps its own trace."""
        middleware = AgentGuardMiddleware(refund_spec())

        async def main() -> list[dict[str, Any]]:
            agent = create_agent(
                PerTaskModel(scripts()), async_tools(AsyncBarrier(RUNS)), middleware=[middleware]
            )
            runs = [
                agent.ainvoke(
                    {"messages": [HumanMessage(f"refund A{i}")]},
                    {"configurable": {"thread_id": f"a{i}"}},
                )
                for i in range(RUNS)
            ]
            return list(await asyncio.gather(*runs))

        check_isolated(asyncio.run(main()))
        assert middleware.running == ()
        for i in range(RUNS):
            session = middleware.session_for(f"a{i}")
            assert session is not None
            assert orders_in(session.trace) == {f"A{i}"}
            assert ("issue_refund" in session.trace.names) is (i % 2 == 0)


def test_only_the_latest_threads_are_kept() -> None:
    """session_for forgets the oldest finished threads beyond keep_threads."""
    middleware = AgentGuardMiddleware(refund_spec(), keep_threads=2)
    agent = create_agent(ScriptedChatModel(["a", "b", "c"]), [], middleware=[middleware])
    for thread in ("t0", "t1", "t2"):
        agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": thread}})
    assert middleware.session_for("t0") is None
    assert middleware.session_for("t1") is not None
    assert middleware.session_for("t2") is middleware.agentguard


class TestResumedThreads:
    def _agent(self, middleware: AgentGuardMiddleware, script: list[Step], saver: Any) -> Any:
        return create_agent(
            ScriptedChatModel(script),
            sync_tools(threading.Barrier(1)),
            middleware=[middleware],
            checkpointer=saver,
        )

    TURN_1: ClassVar[list[Step]] = [call("verify_identity", customer_id="C1"), "verified"]
    TURN_2: ClassVar[list[Step]] = [call("issue_refund", order_id="A1", amount=5), "refunded"]

    @staticmethod
    def ask(agent: Any, text: str, thread: str) -> dict[str, Any]:
        out: dict[str, Any] = agent.invoke(
            {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}
        )
        return out

    def test_second_turn_on_a_thread_continues_the_trace(self) -> None:
        """Identity verified in turn 1 lets turn 2 refund; the trace spans both turns."""
        middleware = AgentGuardMiddleware(refund_spec())
        agent = self._agent(middleware, [*self.TURN_1, *self.TURN_2], InMemorySaver())
        self.ask(agent, "verify me", "t")
        first = middleware.session_for("t")
        out = self.ask(agent, "now refund", "t")
        session = middleware.session_for("t")
        assert session is not None
        assert first is not None
        assert session is not first
        assert not any(isinstance(m, ToolMessage) and m.status == "error" for m in out["messages"])
        assert session.trace.names == (
            "verify_identity",
            "final_answer",
            "issue_refund",
            "final_answer",
        )
        assert [(d.action.value, d.tool) for d in session.attempts] == [
            ("allow", "issue_refund"),
            ("allow", "final_answer"),
        ]
        assert session.report is not None
        assert first.report is not None
        assert session.report.run_id == first.report.run_id
        assert len(session.report.decisions) == 4

    def test_another_thread_does_not_inherit_the_trace(self) -> None:
        """A refund on a different thread_id is blocked: nothing was verified there."""
        middleware = AgentGuardMiddleware(refund_spec())
        agent = self._agent(middleware, [*self.TURN_1, *self.TURN_2], InMemorySaver())
        self.ask(agent, "verify me", "t")
        out = self.ask(agent, "now refund", "other")
        refusal = next(m for m in out["messages"] if isinstance(m, ToolMessage))
        assert refusal.status == "error"
        session = middleware.session_for("other")
        assert session is not None
        assert session.trace.names == ("final_answer",)

    def test_fresh_middleware_restores_from_the_checkpoint(self) -> None:
        """A new middleware and agent (another process) continue the thread from the checkpoint."""
        saver = InMemorySaver()
        first = self._agent(AgentGuardMiddleware(refund_spec()), self.TURN_1, saver)
        self.ask(first, "verify me", "t")
        saved = saved_firewall(first.get_state({"configurable": {"thread_id": "t"}}).values)
        assert saved is not None
        assert json.loads(json.dumps(saved)) == saved
        assert Firewall.restore(refund_spec(), saved).trace.names == (
            "verify_identity",
            "final_answer",
        )

        middleware = AgentGuardMiddleware(refund_spec())
        second = self._agent(middleware, self.TURN_2, saver)
        out = self.ask(second, "now refund", "t")
        assert out["messages"][-1].content == "refunded"
        session = middleware.session_for("t")
        assert session is not None
        assert session.trace.names[2:] == ("issue_refund", "final_answer")
        assert session.trace.names[0] == "verify_identity"
        assert STATE_KEY not in out

    def test_resume_false_starts_every_invocation_afresh(self) -> None:
        """With resume=False turn 2 sees an empty trace, so its refund is blocked."""
        middleware = AgentGuardMiddleware(refund_spec(), resume=False)
        script: list[Step] = [*self.TURN_1, call("issue_refund", order_id="A1", amount=5), "no"]
        agent = self._agent(middleware, script, InMemorySaver())
        self.ask(agent, "verify me", "t")
        out = self.ask(agent, "now refund", "t")
        assert any(isinstance(m, ToolMessage) and m.status == "error" for m in out["messages"])
        session = middleware.session_for("t")
        assert session is not None
        assert session.trace.names == ("final_answer",)

    def test_a_stop_carries_over_to_the_next_turn(self) -> None:
        """A thread stopped in turn 1 stays stopped in turn 2 (the checkpoint says so)."""
        spec = rules(stop={"delete_account"}, requires={"issue_refund": "verify_identity"})
        middleware = AgentGuardMiddleware(spec)

        @tool
        def delete_account() -> str:
            """Delete the account."""
            return "deleted"

        agent = create_agent(
            ScriptedChatModel([call("delete_account"), call("verify_identity", customer_id="C")]),
            [*sync_tools(threading.Barrier(1)), delete_account],
            middleware=[middleware],
            checkpointer=InMemorySaver(),
        )
        self.ask(agent, "delete", "t")
        out = self.ask(agent, "verify me", "t")
        session = middleware.session_for("t")
        assert session is not None
        assert session.stopped
        assert "stopped" in str(out["messages"][-1].content).lower()


class TestInterruptedRuns:
    """A human-in-the-loop interrupt ends invoke() mid-run; Command(resume=...) goes on."""

    SCRIPT: ClassVar[list[Step]] = [
        call("verify_identity", customer_id="C1"),
        call("issue_refund", order_id="A1", amount=5),
        "refunded",
    ]
    APPROVE: ClassVar[Command[Any]] = Command(resume={"decisions": [{"type": "approve"}]})
    CONFIG: ClassVar[Any] = {"configurable": {"thread_id": "h"}}

    @staticmethod
    def agent(middleware: AgentGuardMiddleware, script: list[Step], saver: Any) -> Any:
        approval = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True})
        return create_agent(
            ScriptedChatModel(script),
            sync_tools(threading.Barrier(1)),
            middleware=[middleware, approval],
            checkpointer=saver,
        )

    def test_resumed_in_the_same_process_the_run_goes_on(self) -> None:
        """The interrupted run's session stays open and the resumed run finishes it."""
        middleware = AgentGuardMiddleware(refund_spec())
        agent = self.agent(middleware, self.SCRIPT, InMemorySaver())
        out = agent.invoke({"messages": [HumanMessage("refund")]}, self.CONFIG)
        assert "__interrupt__" in out
        assert [s.trace.names for s in middleware.running] == [("verify_identity",)]
        out = agent.invoke(self.APPROVE, self.CONFIG)
        assert out["messages"][-1].content == "refunded"
        assert middleware.running == ()
        session = middleware.session_for("h")
        assert session is not None
        assert session.trace.names == ("verify_identity", "issue_refund", "final_answer")

    def test_resumed_in_another_process_the_checkpoint_carries_the_trace(self) -> None:
        """A fresh middleware resuming the interrupted thread still knows the identity check."""
        saver = InMemorySaver()
        first = self.agent(AgentGuardMiddleware(refund_spec()), self.SCRIPT, saver)
        first.invoke({"messages": [HumanMessage("refund")]}, self.CONFIG)
        middleware = AgentGuardMiddleware(refund_spec())
        second = self.agent(middleware, ["refunded"], saver)
        out = second.invoke(self.APPROVE, self.CONFIG)
        assert not any(isinstance(m, ToolMessage) and m.status == "error" for m in out["messages"])
        session = middleware.session_for("h")
        assert session is not None
        assert session.trace.names == ("verify_identity", "issue_refund", "final_answer")
        assert [(d.action.value, d.tool) for d in session.attempts] == [
            ("allow", "issue_refund"),
            ("allow", "final_answer"),
        ]
