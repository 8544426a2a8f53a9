"""LangChain: every path from a model's output to an effect is gated: structured answers
(``response_format=ToolStrategy``), ``return_direct`` outputs that become the answer, and
tool calls retried or handled by other middleware, in the orders LangChain composes them."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from langchain.agents.structured_output import ToolStrategy
from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

from agentguard.enforcement.decision import Action
from agentguard.errors import AgentGuardError
from agentguard.testing.langchain_models import ScriptedChatModel, call, if_observed
from tests.adversarial._langchain_kit import Ran, assert_invariants, log_lines, spec_file
from tests.integrations.adapters import AgentGuardMiddleware

SPEC = """
spec gating
constraint answer_cap severity HARD_STOP := G !final_answer(answer.amount > 500)
constraint looked_first severity SOFT_BLOCK(3) := G(final_answer -> O lookup)
constraint no_secret severity HARD_STOP := G !final_answer(answer ~ /secret/)
constraint polite severity SOFT_BLOCK(3) := G !final_answer(answer ~ /rude/)
"""

RAN: Ran = []
FAILURES: list[int] = []


class RefundDecision(BaseModel):
    """The agent's decision on a refund."""

    order_id: str
    amount: float


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    RAN.append(("lookup", {"order_id": order_id}))
    return "found"


@tool(return_direct=True)
def read_note(title: str) -> str:
    """Read a note and hand it to the user as is."""
    RAN.append(("read_note", {"title": title}))
    return {"s": "the secret is 42", "r": "a rude note", "ok": "all fine"}[title]


@tool
def flaky(order_id: str) -> str:
    """A service that fails twice, then answers."""
    RAN.append(("flaky", {"order_id": order_id}))
    if FAILURES and FAILURES[0] > 0:
        FAILURES[0] -= 1
        raise ConnectionError("try again")
    return "ok"


TOOLS = [lookup, read_note, flaky]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()
    FAILURES.clear()


def _agent(
    script: list[Any], tmp_path: Path, middleware: list[Any] | None = None, **kw: Any
) -> tuple[Any, Any]:
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    chain = [guard] if middleware is None else [m if m != "guard" else guard for m in middleware]
    agent = create_agent(ScriptedChatModel(script), TOOLS, middleware=chain, **kw)
    return guard, agent


def _go(agent: Any, use_async: bool = False) -> Any:
    task = {"messages": [HumanMessage("go")]}
    return asyncio.run(agent.ainvoke(task)) if use_async else agent.invoke(task)


# structured answers --------------------------------------------------------------------
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_structured_answer_is_a_final_answer_and_is_stopped(
    tmp_path: Path, use_async: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ToolStrategy answer over the cap is stopped: no structured_response comes out,
    and the log holds the answer's decision (it used to hold only a finish, score 1.0)."""
    guard, agent = _agent(
        [call("lookup", order_id="A"), call("RefundDecision", order_id="A", amount="900")],
        tmp_path,
        response_format=ToolStrategy(RefundDecision),
    )
    out = _go(agent, use_async)
    assert out.get("structured_response") is None
    report = assert_invariants(
        guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path, capsys
    )
    stop = report.decisions[-1]
    assert stop.tool == "final_answer" and stop.action is Action.STOP
    assert stop.args == {"answer": {"order_id": "A", "amount": 900.0}}


def test_a_refused_structured_answer_is_asked_for_again(tmp_path: Path) -> None:
    """An answer before the lookup is refused (the model reads why, at its structured
    call), and the answer given after the lookup is the one returned and recorded."""
    guard, agent = _agent(
        [
            call("RefundDecision", order_id="A", amount=10),
            call("lookup", order_id="A"),
            call("RefundDecision", order_id="A", amount=20),
        ],
        tmp_path,
        response_format=ToolStrategy(RefundDecision),
    )
    out = _go(agent)
    assert out["structured_response"] == RefundDecision(order_id="A", amount=20)
    refused = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(refused) == 1 and refused[0].name == "RefundDecision"
    report = assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.trace.names == ("lookup", "final_answer")
    assert report.trace[1].args == {"answer": {"order_id": "A", "amount": 20.0}}


def test_a_structured_answer_beside_tool_calls_is_given_after_them(tmp_path: Path) -> None:
    """[lookup, RefundDecision] in one turn: the lookup runs, then the run ends with the
    answer; the trace has the answer after the lookup, and a capped one is stopped."""
    guard, agent = _agent(
        [[call("lookup", order_id="A"), call("RefundDecision", order_id="A", amount=30)]],
        tmp_path,
        response_format=ToolStrategy(RefundDecision),
    )
    out = _go(agent)
    assert out["structured_response"] == RefundDecision(order_id="A", amount=30)
    report = assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.trace.names == ("lookup", "final_answer")

    RAN.clear()
    (tmp_path / "capped").mkdir()
    guard, agent = _agent(
        [[call("lookup", order_id="B"), call("RefundDecision", order_id="B", amount=800)]],
        tmp_path / "capped",
        response_format=ToolStrategy(RefundDecision),
    )
    out = _go(agent)
    assert out.get("structured_response") is None
    assert RAN == []  # the batch was stopped before any of it ran
    where = tmp_path / "capped"
    assert_invariants(guard.agentguard.report, spec_file(where, SPEC), RAN, where)


# return_direct -------------------------------------------------------------------------
def test_a_return_direct_output_is_gated_as_the_final_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A return_direct tool's output becomes the answer: it is proposed as final_answer,
    and the trace shows it after the call (it used to end the run unchecked)."""
    guard, agent = _agent([call("lookup", order_id="A"), call("read_note", title="ok")], tmp_path)
    out = _go(agent)
    assert out["messages"][-1].content == "all fine"
    report = assert_invariants(
        guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path, capsys
    )
    assert report.trace.names == ("lookup", "read_note", "final_answer")
    assert report.trace[2].args == {"answer": "all fine"}


def test_a_forbidden_return_direct_answer_is_stopped(tmp_path: Path) -> None:
    """The note holds a secret: the run does not end with it as its answer."""
    guard, agent = _agent([call("lookup", order_id="A"), call("read_note", title="s")], tmp_path)
    out = _go(agent)
    last = str(out["messages"][-1].content)
    assert "42" not in last and "stopped" in last.lower()
    report = assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.decisions[-1].action is Action.STOP
    assert report.decisions[-1].args == {"answer": "the secret is 42"}


def test_a_refused_return_direct_answer_goes_back_to_the_model(tmp_path: Path) -> None:
    """A refused (not stopped) return_direct answer: the model is asked again."""
    guard, agent = _agent(
        [call("lookup", order_id="A"), call("read_note", title="r"), "a kind summary"],
        tmp_path,
    )
    out = _go(agent)
    assert out["messages"][-1].content == "a kind summary"
    report = assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.trace.names == ("lookup", "read_note", "final_answer")
    assert report.trace[2].args == {"answer": "a kind summary"}


# middleware order ----------------------------------------------------------------------
def _retry() -> ToolRetryMiddleware:
    return ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False, on_failure="error")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_each_retry_inside_the_guard_is_a_call_of_the_trace(
    tmp_path: Path, use_async: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """[guard, ToolRetryMiddleware]: the tool runs three times, and the trace holds three
    calls, two with their errors (it used to hold one)."""
    FAILURES.append(2)
    guard, agent = _agent(
        [call("lookup", order_id="A"), call("flaky", order_id="A"), "done"],
        tmp_path,
        ["guard", _retry()],
    )
    _go(agent, use_async)
    assert [name for name, _ in RAN] == ["lookup", "flaky", "flaky", "flaky"]
    report = assert_invariants(
        guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path, capsys
    )
    assert [c.error for c in report.trace if c.name == "flaky"] == [True, True, False]


def test_the_documented_error_and_retry_stack_inside_the_guard(tmp_path: Path) -> None:
    """[guard, ToolErrorMiddleware, ToolRetryMiddleware] (LangChain's documented pair): a
    tool failing every attempt is retried, then handled as a message; the run goes on and
    a later call runs."""
    FAILURES.append(99)
    errors = ToolErrorMiddleware(lambda exc, request: f"{type(exc).__name__}: try later")
    guard, agent = _agent(
        [
            call("flaky", order_id="A"),
            if_observed("try later", call("lookup", order_id="A"), "stuck"),
            "done",
        ],
        tmp_path,
        ["guard", errors, _retry()],
    )
    out = _go(agent)
    assert out["messages"][-1].content == "done"
    assert [name for name, _ in RAN] == ["flaky", "flaky", "flaky", "lookup"]
    report = assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert [c.error for c in report.trace if c.name == "flaky"] == [True, True, True]


@pytest.mark.parametrize("outer", ["retry", "error", "custom"])
def test_an_error_handler_outside_the_guard_is_refused_when_the_agent_is_built(
    tmp_path: Path, outer: str
) -> None:
    """A middleware that may handle a tool's error, listed before the guard, is refused by
    create_agent with the order to use (the guard used to end the run at the first
    transient error, and refuse every later call)."""

    class Swallow(AgentMiddleware[Any, Any, Any]):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            try:
                return handler(request)
            except ConnectionError:
                return ToolMessage("later", tool_call_id=request.tool_call["id"])

    handler = {
        "retry": _retry(),
        "error": ToolErrorMiddleware(lambda exc, request: "later"),
        "custom": Swallow(),
    }[outer]
    with pytest.raises(AgentGuardError, match="list AgentGuardMiddleware before it"):
        _agent(["done"], tmp_path, [handler, "guard"])


def test_only_an_order_that_cannot_be_made_correct_is_refused(tmp_path: Path) -> None:
    """ToolRetryMiddleware before the guard is refused; HumanInTheLoopMiddleware, which
    never handles a tool's error, may come first, and a tool's error then ends the run with
    the session finished."""
    with pytest.raises(AgentGuardError, match="ToolRetryMiddleware"):
        _agent(["done"], tmp_path, [_retry(), "guard"])
    FAILURES.append(99)
    human = HumanInTheLoopMiddleware(interrupt_on={"lookup": True})
    guard, agent = _agent([call("flaky", order_id="A"), "done"], tmp_path, [human, "guard"])
    with pytest.raises(ConnectionError):
        _go(agent)
    assert guard.running == ()
    report = assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert [c.error for c in report.trace] == [True]
    assert log_lines(tmp_path / "d.jsonl")[-1]["event"] == "agentguard.finish"


def test_a_tool_calling_another_tool_through_its_runtime_is_checked(tmp_path: Path) -> None:
    """A tool reaching a sibling tool through ``runtime.tools`` and invoking it directly:
    that call is checked like any other (it used to run unchecked, out of the trace)."""

    @tool
    def forward(title: str, runtime: ToolRuntime) -> str:
        """Hand a note over."""
        RAN.append(("forward", {"title": title}))
        other = next(t for t in runtime.tools if t.name == "read_note")
        return str(other.invoke({"title": title}))

    spec_text = SPEC + "constraint no_notes severity SOFT_BLOCK(3) := G !read_note\n"
    guard = AgentGuardMiddleware(spec_file(tmp_path, spec_text)[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(
        ScriptedChatModel([call("lookup", order_id="A"), call("forward", title="s"), "done"]),
        [*TOOLS, forward],
        middleware=[guard],
    )
    _go(agent)
    assert RAN == [("lookup", {"order_id": "A"}), ("forward", {"title": "s"})]
    report = assert_invariants(
        guard.agentguard.report, spec_file(tmp_path, spec_text), RAN, tmp_path
    )
    assert [(d.tool, d.action) for d in report.decisions if d.tool == "read_note"] == [
        ("read_note", Action.BLOCK)
    ]


def _reviewed_batch(
    tmp_path: Path, guard_first: bool, looked_up: str, decision: dict[str, Any]
) -> tuple[AgentGuardMiddleware, str, float]:
    """[lookup(A), read_note] in one turn under ``G(read_note -> O looked_up)``, the
    reviewer's ``decision`` on the lookup; the guard, the spec and the resume's seconds."""
    spec_text = (
        SPEC + f"constraint looked_up severity SOFT_BLOCK(3) := G(read_note -> O {looked_up})\n"
    )
    guard = AgentGuardMiddleware(spec_file(tmp_path, spec_text)[0], log_path=tmp_path / "d.jsonl")
    human = HumanInTheLoopMiddleware(interrupt_on={"lookup": True})
    agent = create_agent(
        ScriptedChatModel([[call("lookup", order_id="A"), call("read_note", title="ok")], "x"]),
        TOOLS,
        middleware=[guard, human] if guard_first else [human, guard],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("go")]}, config)
    began = time.monotonic()
    agent.invoke(Command(resume={"decisions": [decision]}), config)
    return guard, spec_text, time.monotonic() - began


@pytest.mark.parametrize("guard_first", [True, False], ids=["guard-first", "human-first"])
def test_a_call_the_reviewer_rejects_holds_no_sibling(tmp_path: Path, guard_first: bool) -> None:
    """[lookup, read_note] in one turn, the note's answer relying on the lookup; the
    reviewer rejects the lookup, which never runs: its decision is withdrawn at once, and
    the sibling is judged without it, without waiting (it used to wait out the firewall's
    30 s start timeout for a call that would never run)."""
    reject = {"type": "reject", "message": "no"}
    guard, spec_text, seconds = _reviewed_batch(tmp_path, guard_first, "lookup", reject)
    assert seconds < 10
    assert RAN == []
    session = guard.session_for("t")
    assert session is not None
    assert_invariants(session.report, spec_file(tmp_path, spec_text), RAN, tmp_path)


@pytest.mark.parametrize("guard_first", [True, False], ids=["guard-first", "human-first"])
def test_a_call_the_reviewer_edits_holds_no_sibling(tmp_path: Path, guard_first: bool) -> None:
    """[lookup(A), read_note] in one turn, the note relying on the lookup of A; the
    reviewer edits the lookup to B. The batch decision of lookup(A) never runs: it is
    withdrawn as the edited call arrives, and the note is judged at once without it (with
    the reviewer outside the guard it waited out the 30 s start timeout: round 12)."""
    edit = {"type": "edit", "edited_action": {"name": "lookup", "args": {"order_id": "B"}}}
    guard, spec_text, seconds = _reviewed_batch(
        tmp_path, guard_first, 'lookup(order_id = "A")', edit
    )
    assert seconds < 10
    assert RAN == [("lookup", {"order_id": "B"})]  # the note was refused: A never looked up
    session = guard.session_for("t")
    assert session is not None
    assert_invariants(session.report, spec_file(tmp_path, spec_text), RAN, tmp_path)
