"""A checkpointed thread continued by a middleware built with another spec (on_spec_change)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import FirewallStateError
from agentguard.enforcement.prototype import spec_hash
from agentguard.guard import GuardSession
from agentguard.language import load_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call
from integrations._langchain_spec_change import SPEC_CHANGED_EVENT

from ._offline import assert_online_is_offline, log_events
from .adapters import AgentGuardMiddleware

OLD = "constraint looked := G(refund -> O lookup)\n"
NEW = OLD + "constraint no_zap := G !zap\n"
CONFIG: Any = {"configurable": {"thread_id": "t"}}
RAN: list[str] = []


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    RAN.append("lookup")
    return "found"


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    RAN.append("refund")
    return "refunded"


def spec_at(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.ltl"
    path.write_text(text)
    return path


def first_turn(tmp_path: Path, saver: InMemorySaver, spec_text: str = OLD) -> Path:
    """Turn 1 of the thread under the old spec: the order is looked up."""
    RAN.clear()
    middleware = AgentGuardMiddleware(load_spec(spec_at(tmp_path, "old", spec_text)))
    script: list[Any] = [call("lookup", order_id="A"), "looked it up"]
    agent = create_agent(
        ScriptedChatModel(script), [lookup, refund], middleware=[middleware], checkpointer=saver
    )
    agent.invoke({"messages": [HumanMessage("look up A")]}, CONFIG)
    return tmp_path / "old.ltl"


def next_turn(middleware: AgentGuardMiddleware, saver: InMemorySaver) -> GuardSession:
    """Turn 2 under ``middleware``'s spec: the model asks for the refund."""
    script: list[Any] = [call("refund", order_id="A"), "refunded"]
    agent = create_agent(
        ScriptedChatModel(script), [lookup, refund], middleware=[middleware], checkpointer=saver
    )
    agent.invoke({"messages": [HumanMessage("refund A")]}, CONFIG)
    session = middleware.session_for("t")
    assert session is not None
    return session


def test_by_default_the_history_is_rejudged_and_the_thread_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Turn 1's lookup is replayed under the new spec (not re-run): the refund is allowed."""
    saver = InMemorySaver()
    old = first_turn(tmp_path, saver)
    new, log = spec_at(tmp_path, "new", NEW), tmp_path / "new.jsonl"
    middleware = AgentGuardMiddleware(load_spec(new), log_path=log)
    session = next_turn(middleware, saver)
    assert RAN == ["lookup", "refund"]  # the lookup ran once, in turn 1
    assert session.trace.names == ("lookup", "final_answer", "refund", "final_answer")
    assert session.trace[0].result == "found"
    (event,) = log_events(log, SPEC_CHANGED_EVENT)
    assert event["previous_spec_hash"] == spec_hash(load_spec(old))
    assert event["spec_hash"] == spec_hash(load_spec(new))
    assert (event["on_spec_change"], event["replayed"], event["replayed_events"]) == (
        "rejudge",
        2,
        0,
    )
    assert_online_is_offline(new, session.report, log, capsys)


def test_a_history_the_new_spec_forbids_is_reported_as_late_violations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The new spec forbids lookups: the replayed one breaks it; the run is judged on it."""
    saver = InMemorySaver()
    first_turn(tmp_path, saver)
    new = spec_at(tmp_path, "new", "constraint no_lookup := G !lookup\n")
    log = tmp_path / "new.jsonl"
    session = next_turn(AgentGuardMiddleware(load_spec(new), log_path=log), saver)
    assert session.report is not None
    assert not session.report.compliance.passed
    assert "no_lookup" in {v.constraint for v in session.report.late_violations}
    assert_online_is_offline(new, session.report, log, capsys)


def test_dialogue_events_the_old_spec_kept_are_replayed_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both specs judge user messages: turn 1's message is replayed before its lookup."""
    asked = "constraint asked := G(refund -> O user_message)\n"
    saver = InMemorySaver()
    first_turn(tmp_path, saver, asked)
    new, log = spec_at(tmp_path, "new", asked + "constraint no_zap := G !zap\n"), tmp_path / "n"
    session = next_turn(AgentGuardMiddleware(load_spec(new), log_path=log), saver)
    names = session.trace.names
    assert names[:2] == ("user_message", "assistant_message")
    assert names.count("user_message") == 2  # turn 1's, replayed, and turn 2's, observed
    (event,) = log_events(log, SPEC_CHANGED_EVENT)
    assert event["replayed_events"] == 3  # user, assistant (tool call), assistant (answer)
    assert_online_is_offline(new, session.report, log, capsys)


def test_restart_starts_the_trace_afresh_and_says_so(tmp_path: Path) -> None:
    """on_spec_change='restart': nothing is replayed; the refund lacks its lookup and is refused."""
    saver = InMemorySaver()
    first_turn(tmp_path, saver)
    log = tmp_path / "new.jsonl"
    middleware = AgentGuardMiddleware(
        load_spec(spec_at(tmp_path, "new", NEW)), log_path=log, on_spec_change="restart"
    )
    session = next_turn(middleware, saver)
    assert RAN == ["lookup"]
    assert "lookup" not in session.trace.names
    assert [d.tool for d in session.attempts if d.action is not Action.ALLOW] == ["refund"]
    (event,) = log_events(log, SPEC_CHANGED_EVENT)
    assert (event["on_spec_change"], event["replayed"]) == ("restart", 0)


def test_error_refuses_the_thread_and_names_the_option(tmp_path: Path) -> None:
    """on_spec_change='error': the old refusal, its message naming the option."""
    saver = InMemorySaver()
    first_turn(tmp_path, saver)
    middleware = AgentGuardMiddleware(
        load_spec(spec_at(tmp_path, "new", NEW)), on_spec_change="error"
    )
    with pytest.raises(FirewallStateError, match="on_spec_change='rejudge'"):
        next_turn(middleware, saver)


def test_the_same_spec_continues_without_a_spec_change_event(tmp_path: Path) -> None:
    """A thread continued under its own spec restores its state as it is."""
    saver = InMemorySaver()
    old = first_turn(tmp_path, saver)
    log = tmp_path / "same.jsonl"
    session = next_turn(AgentGuardMiddleware(load_spec(old), log_path=log), saver)
    assert session.trace.names == ("lookup", "final_answer", "refund", "final_answer")
    assert log_events(log, SPEC_CHANGED_EVENT) == []


def test_an_unknown_choice_is_refused_when_the_middleware_is_built() -> None:
    """A misspelt on_spec_change is a ValueError naming the choices."""
    with pytest.raises(ValueError, match="rejudge"):
        AgentGuardMiddleware(OLD, on_spec_change="replay")  # type: ignore[arg-type]


def test_a_new_spec_judging_messages_reads_the_conversation_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old spec kept no messages: turn 1's user message enters, after the replayed calls."""
    saver = InMemorySaver()
    first_turn(tmp_path, saver)
    text = OLD + "constraint asked := G(refund -> O user_message)\n"
    new, log = spec_at(tmp_path, "new", text), tmp_path / "new.jsonl"
    session = next_turn(AgentGuardMiddleware(load_spec(new), log_path=log), saver)
    names = session.trace.names
    assert names[:2] == ("lookup", "final_answer")
    assert [c.args["text"] for c in session.trace if c.name == "user_message"] == [
        "look up A",
        "refund A",
    ]
    (event,) = log_events(log, SPEC_CHANGED_EVENT)
    assert (event["replayed_events"], event["conversation_reread"]) == (0, True)
    assert_online_is_offline(new, session.report, log, capsys)


def test_a_history_breaking_a_new_hard_stop_stops_the_thread(tmp_path: Path) -> None:
    """The replayed lookup breaks the new spec's HARD_STOP: the next call is stopped, not run."""
    saver = InMemorySaver()
    first_turn(tmp_path, saver)
    text = "constraint no_lookup severity HARD_STOP := G !lookup\n"
    middleware = AgentGuardMiddleware(load_spec(spec_at(tmp_path, "new", text)))
    session = next_turn(middleware, saver)
    assert RAN == ["lookup"]
    assert session.stopped
    assert "refund" not in session.trace.names
