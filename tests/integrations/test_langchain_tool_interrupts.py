"""A tool that asks a human (LangGraph ``interrupt()``) or hands control on (``ParentCommand``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from agentguard.enforcement.decision import Action
from agentguard.guard import GuardSession
from agentguard.language import load_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call
from integrations._langchain_calls import INTERRUPTED

from ._offline import assert_online_is_offline, log_events
from .adapters import AgentGuardMiddleware, guard_tool_node

SPEC_TEXT = (
    "constraint once := CalledN(lookup, 1, <=)\nconstraint asked := G(refund -> O ask_human)\n"
)
RAN: list[str] = []


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    RAN.append("lookup")
    return "ok"


@tool
def ask_human(question: str) -> str:
    """Ask a human."""
    RAN.append("ask_human")
    return f"answer: {interrupt({'question': question})}"


@tool
def ask_twice(question: str) -> str:
    """Ask a human two things."""
    RAN.append("ask_twice")
    first = interrupt({"question": question})
    second = interrupt({"question": "are you sure?"})
    return f"{first}/{second}"


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    RAN.append("refund")
    return "refunded"


TOOLS = [lookup, ask_human, ask_twice, refund]
CONFIG: Any = {"configurable": {"thread_id": "t"}}


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec.ltl"
    path.write_text(SPEC_TEXT)
    return path


def guarded(spec_file: Path, log: Path, script: list[Any]) -> tuple[AgentGuardMiddleware, Any]:
    RAN.clear()
    middleware = AgentGuardMiddleware(load_spec(spec_file), log_path=log)
    agent = create_agent(
        ScriptedChatModel(script), TOOLS, middleware=[middleware], checkpointer=InMemorySaver()
    )
    return middleware, agent


def names(session: GuardSession) -> tuple[str, ...]:
    """The session's trace so far (a function: each read is a fresh value for mypy)."""
    return session.trace.names


def withdrawn_reasons(log: Path) -> list[tuple[str, str]]:
    return [(e["tool"], e["message"]) for e in log_events(log, "agentguard.withdrawn")]


def test_a_single_asking_call_pauses_the_run_and_runs_once_after_resume(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The interrupt reaches the caller; resumed, the call is in the trace once, with its result."""
    log = tmp_path / "run.jsonl"
    script = [call("ask_human", question="refund?"), call("refund", order_id="A"), "done"]
    middleware, agent = guarded(spec_file, log, script)
    out = agent.invoke({"messages": [HumanMessage("refund A")]}, CONFIG)
    (pending,) = out["__interrupt__"]
    assert pending.value == {"question": "refund?"}
    session = middleware.session_for("t")
    assert session is not None
    assert names(session) == ()  # nothing finished yet
    assert withdrawn_reasons(log) == [("ask_human", INTERRUPTED)]
    out = agent.invoke(Command(resume="yes"), CONFIG)
    assert out["messages"][-1].content == "done"
    assert RAN == ["ask_human", "ask_human", "refund"]
    assert session.trace.names == ("ask_human", "refund", "final_answer")
    assert session.trace[0].result == "answer: yes"
    assert [e["tool"] for e in log_events(log, "agentguard.result")] == [
        "ask_human",
        "refund",
        "final_answer",
    ]
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_the_siblings_of_an_asking_call_run_and_are_recorded_once(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch [lookup, ask_human]: lookup is not run again on resume and counts once."""
    log = tmp_path / "run.jsonl"
    batch = [call("lookup", order_id="A"), call("ask_human", question="refund?")]
    middleware, agent = guarded(spec_file, log, [batch, call("refund", order_id="A"), "done"])
    agent.invoke({"messages": [HumanMessage("refund A")]}, CONFIG)
    session = middleware.session_for("t")
    assert session is not None
    assert names(session) == ("lookup",)
    agent.invoke(Command(resume="yes"), CONFIG)
    assert sorted(RAN) == ["ask_human", "ask_human", "lookup", "refund"]
    assert session.trace.names == ("lookup", "ask_human", "refund", "final_answer")
    assert session.report is not None and session.report.compliance.passed
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_a_tool_that_asks_twice_is_withdrawn_at_each_pause_and_recorded_once(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two interrupts in one tool: two withdrawn attempts, one call with the final result."""
    log = tmp_path / "run.jsonl"
    middleware, agent = guarded(spec_file, log, [call("ask_twice", question="go?"), "done"])
    agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)
    out = agent.invoke(Command(resume="yes"), CONFIG)
    (pending,) = out["__interrupt__"]
    assert pending.value == {"question": "are you sure?"}
    agent.invoke(Command(resume="sure"), CONFIG)
    session = middleware.session_for("t")
    assert session is not None
    assert session.trace.names == ("ask_twice", "final_answer")
    assert session.trace[0].result == "yes/sure"
    assert withdrawn_reasons(log) == [("ask_twice", INTERRUPTED)] * 2
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_a_thread_never_resumed_keeps_no_unfinished_call(spec_file: Path, tmp_path: Path) -> None:
    """A new message instead of the resume: the asked call never finished, so it is not in the trace."""
    log = tmp_path / "run.jsonl"
    script = [call("ask_human", question="refund?"), call("lookup", order_id="A"), "looked"]
    middleware, agent = guarded(spec_file, log, script)
    agent.invoke({"messages": [HumanMessage("refund A")]}, CONFIG)
    out = agent.invoke({"messages": [HumanMessage("never mind, look it up")]}, CONFIG)
    assert out["messages"][-1].content == "looked"
    session = middleware.session_for("t")
    assert session is not None
    assert "ask_human" not in session.trace.names
    assert session.trace.names[-2:] == ("lookup", "final_answer")


def test_a_sibling_relying_on_the_paused_call_is_judged_without_it(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """refund relied on the paused ask_human: it is judged on what ran (no ask_human), refused."""
    log = tmp_path / "run.jsonl"
    batch = [call("ask_human", question="refund?"), call("refund", order_id="A")]
    middleware, agent = guarded(spec_file, log, [batch, "done"])
    agent.invoke({"messages": [HumanMessage("refund A")]}, CONFIG)
    assert "refund" not in RAN
    agent.invoke(Command(resume="yes"), CONFIG)
    session = middleware.session_for("t")
    assert session is not None
    assert session.trace.names == ("ask_human", "final_answer")
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_the_async_path_pauses_and_resumes_the_same_way(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ainvoke: the interrupt propagates; the resumed call is recorded once."""
    log = tmp_path / "run.jsonl"
    script = [call("ask_human", question="refund?"), call("refund", order_id="A"), "done"]
    middleware, agent = guarded(spec_file, log, script)

    async def run() -> Any:
        await agent.ainvoke({"messages": [HumanMessage("refund A")]}, CONFIG)
        return await agent.ainvoke(Command(resume="yes"), CONFIG)

    out = asyncio.run(run())
    assert out["messages"][-1].content == "done"
    session = middleware.session_for("t")
    assert session is not None
    assert session.trace.names == ("ask_human", "refund", "final_answer")
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_a_tool_node_guard_pauses_and_resumes_an_asking_call(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """guard_tool_node in a hand-built graph with a checkpointer: one call, with its result."""
    RAN.clear()
    log = tmp_path / "run.jsonl"
    guard = guard_tool_node(load_spec(spec_file), log_path=log)
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(TOOLS, **guard.tool_node_kwargs()))
    graph.add_edge(START, "tools")
    app = graph.compile(checkpointer=InMemorySaver())
    asked = AIMessage(
        "", tool_calls=[{"name": "ask_human", "args": {"question": "ok?"}, "id": "c1"}]
    )
    out = app.invoke({"messages": [asked]}, CONFIG)
    assert "__interrupt__" in out
    out = app.invoke(Command(resume="yes"), CONFIG)
    assert out["messages"][-1].content == "answer: yes"
    report = guard.finish()
    assert report.trace.names == ("ask_human",)
    assert withdrawn_reasons(log) == [("ask_human", INTERRUPTED)]
    assert_online_is_offline(spec_file, report, log, capsys)


def _handoff_graph(tool_call_id: str) -> Any:
    """A subgraph whose node hands control to the agent's model node (a multi-agent handoff)."""

    def hand_over(state: MessagesState) -> Command[Any]:
        answer = ToolMessage("handed to billing", tool_call_id=tool_call_id, name="transfer")
        return Command(graph=Command.PARENT, goto="model", update={"messages": [answer]})

    graph = StateGraph(MessagesState)
    graph.add_node("hand_over", hand_over)
    graph.add_edge(START, "hand_over")
    return graph.compile()


@tool
def transfer(team: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Transfer the conversation to a team."""
    RAN.append("transfer")
    _handoff_graph(tool_call_id).invoke({"messages": []})
    return "not reached: the subgraph hands control on"


def test_a_handoff_through_a_parent_command_is_recorded_as_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ParentCommand out of the tool: the call ran (result: the handoff's message), the run goes on."""
    RAN.clear()
    spec_file, log = tmp_path / "spec.ltl", tmp_path / "run.jsonl"
    spec_file.write_text("constraint one_handoff := CalledN(transfer, 1, <=)\n")
    middleware = AgentGuardMiddleware(load_spec(spec_file), log_path=log)
    script: list[Any] = [call("transfer", team="billing"), "billing has it"]
    agent = create_agent(ScriptedChatModel(script), [transfer], middleware=[middleware])
    out = agent.invoke({"messages": [HumanMessage("bill me")]})
    assert out["messages"][-1].content == "billing has it"
    assert RAN == ["transfer"]
    session = middleware.agentguard
    assert session.trace.names == ("transfer", "final_answer")
    assert session.trace[0].result == "handed to billing"
    assert log_events(log, "agentguard.withdrawn") == []
    assert_online_is_offline(spec_file, session.report, log, capsys)


def test_a_run_resumed_in_another_process_keeps_the_siblings_that_ran(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch [lookup, ask_human] pauses in one process; the thread is resumed by a new
    middleware (another process: only the checkpointer is shared). lookup ran before the
    pause and LangGraph does not run it again: the resumed run's trace still holds it,
    once (it was missing: the checkpoint is saved before the batch runs), and the
    report equals what the second process's log scores offline."""
    saver = InMemorySaver()
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    RAN.clear()
    batch = [call("lookup", order_id="A"), call("ask_human", question="refund?")]
    first = AgentGuardMiddleware(load_spec(spec_file), log_path=first_log)
    create_agent(ScriptedChatModel([batch]), TOOLS, middleware=[first], checkpointer=saver).invoke(
        {"messages": [HumanMessage("refund A")]}, CONFIG
    )
    assert sorted(RAN) == ["ask_human", "lookup"]
    second = AgentGuardMiddleware(load_spec(spec_file), log_path=second_log)
    out = create_agent(
        ScriptedChatModel([call("refund", order_id="A"), "done"]),
        TOOLS,
        middleware=[second],
        checkpointer=saver,
    ).invoke(Command(resume="yes"), CONFIG)
    assert out["messages"][-1].content == "done"
    assert sorted(RAN) == ["ask_human", "ask_human", "lookup", "refund"]
    session = second.session_for("t")
    assert session is not None
    # lookup ran in the first process, before the pause; this one records it at its
    # first model turn, after the call it ran itself
    assert session.trace.names == ("ask_human", "lookup", "refund", "final_answer")
    assert session.trace[1].result == "ok"
    assert session.report is not None and session.report.compliance.passed
    assert_online_is_offline(spec_file, session.report, second_log, capsys)


def test_a_refused_sibling_is_not_taken_for_a_call_that_ran_elsewhere(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch [refund, ask_human]: refund is refused (nothing was asked yet), ask_human
    pauses; resumed by another process, refund's answer is a refusal, not a call that
    ran: the trace has ask_human and the answer only."""
    saver = InMemorySaver()
    RAN.clear()
    batch = [call("refund", order_id="A"), call("ask_human", question="refund?")]
    first = AgentGuardMiddleware(load_spec(spec_file), log_path=tmp_path / "first.jsonl")
    create_agent(ScriptedChatModel([batch]), TOOLS, middleware=[first], checkpointer=saver).invoke(
        {"messages": [HumanMessage("refund A")]}, CONFIG
    )
    log = tmp_path / "second.jsonl"
    second = AgentGuardMiddleware(load_spec(spec_file), log_path=log)
    create_agent(
        ScriptedChatModel(["not refunded"]), TOOLS, middleware=[second], checkpointer=saver
    ).invoke(Command(resume="yes"), CONFIG)
    assert RAN == ["ask_human", "ask_human"]
    session = second.session_for("t")
    assert session is not None
    assert session.trace.names == ("ask_human", "final_answer")
    assert_online_is_offline(spec_file, session.report, log, capsys)


APPROVAL_SPEC = (
    "constraint big_refund severity ASK := G !refund(amount > 500)\n"
    "constraint looked := G(refund -> O lookup)\n"
)


@tool("refund")
def refund_amount(order_id: str, amount: float) -> str:
    """Refund an amount of an order."""
    RAN.append("refund")
    return "refunded"


@pytest.mark.parametrize("ids", ["own", "repeated"])
def test_a_sibling_recorded_after_a_resume_is_in_the_next_checkpoint(
    ids: str, tmp_path: Path
) -> None:
    """Three processes, an approver: [lookup, ask_human] pauses in the first; the second
    resumes it, records lookup, and its approver pauses at a big refund; the third
    approves. The refund, which relies on lookup, is allowed: the second process had
    checkpointed lookup before its pause. With ``repeated`` ids each process's scripted
    model numbers its calls from call_1 again, so the refund's id is an id of the first
    batch: the batch taken over is still the one answered after it."""
    from agentguard.testing.script import call_with_id
    from integrations.langchain import interrupt_approver

    spec = tmp_path / "spec.ltl"
    spec.write_text(APPROVAL_SPEC)
    saver = InMemorySaver()
    tools = [lookup, ask_human, refund_amount]
    RAN.clear()

    def process(script: list[Any]) -> tuple[AgentGuardMiddleware, Any]:
        middleware = AgentGuardMiddleware(load_spec(spec), approver=interrupt_approver)
        agent = create_agent(
            ScriptedChatModel(script), tools, middleware=[middleware], checkpointer=saver
        )
        return middleware, agent

    if ids == "own":
        batch = [
            call_with_id("c1", "lookup", order_id="A"),
            call_with_id("c2", "ask_human", question="refund?"),
        ]
        big = call_with_id("c3", "refund", order_id="A", amount=900)
    else:
        batch = [call("lookup", order_id="A"), call("ask_human", question="refund?")]
        big = call("refund", order_id="A", amount=900)
    process([batch])[1].invoke({"messages": [HumanMessage("refund A")]}, CONFIG)
    second, agent = process([big, "done"])
    paused = agent.invoke(Command(resume="yes"), CONFIG)
    assert paused["__interrupt__"][0].value["tool"] == "refund"
    resumed = second.session_for("t")
    assert resumed is not None and resumed.trace.names == ("ask_human", "lookup")
    third, agent = process(["done"])
    out = agent.invoke(Command(resume={"approved": True, "by": "alice"}), CONFIG)
    assert out["messages"][-1].content == "done"
    assert sorted(RAN) == ["ask_human", "ask_human", "lookup", "refund"]
    session = third.session_for("t")
    assert session is not None
    assert session.trace.names == ("ask_human", "lookup", "refund", "final_answer")
    first = session.attempts[0]
    assert (first.tool, first.action) == ("refund", Action.OVERRIDE)


def test_a_batch_whose_next_model_call_crashed_is_kept_when_resumed_elsewhere(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first process runs lookup, then its model call fails (the scripted model has
    nothing left to say) before any checkpoint holds lookup. Another process resumes the
    thread with ``invoke(None)``: LangGraph runs the model again, not lookup, and the
    resumed run's trace still holds lookup (it was lost: none of that batch's calls
    was this session's own, so the batch was not looked at)."""
    from agentguard.testing.script import ScriptExhaustedError

    saver = InMemorySaver()
    RAN.clear()
    first = AgentGuardMiddleware(load_spec(spec_file), log_path=tmp_path / "first.jsonl")
    crashing = create_agent(
        ScriptedChatModel([call("lookup", order_id="A")]),
        TOOLS,
        middleware=[first],
        checkpointer=saver,
    )
    with pytest.raises(ScriptExhaustedError):
        crashing.invoke({"messages": [HumanMessage("look A up")]}, CONFIG)
    assert RAN == ["lookup"]
    log = tmp_path / "second.jsonl"
    second = AgentGuardMiddleware(load_spec(spec_file), log_path=log)
    out = create_agent(
        ScriptedChatModel(["found it"]), TOOLS, middleware=[second], checkpointer=saver
    ).invoke(None, CONFIG)
    assert out["messages"][-1].content == "found it"
    assert RAN == ["lookup"]
    session = second.session_for("t")
    assert session is not None
    assert session.trace.names == ("lookup", "final_answer")
    assert session.trace[0].result == "ok"
    assert_online_is_offline(spec_file, session.report, log, capsys)
