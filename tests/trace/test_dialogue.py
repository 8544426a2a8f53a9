"""Dialogue events: user and assistant messages as positions of the trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.enforcement.firewall import Firewall
from agentguard.errors import SpecError, TraceError, TraceRecordError
from agentguard.language import parse_spec
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.scoring.batch import verify_traces
from agentguard.scoring.verify import verify_trace
from agentguard.semantics.evaluator import holds
from agentguard.trace.loaders import load_traces, trace_from_json
from agentguard.trace.model import DROPPED_MESSAGES, Call, Trace

CONFIRM = parse_spec(
    r"constraint confirmed := G(book_reservation -> O user_message(text ~ /\byes\b/i))"
)
NEXT = parse_spec("constraint next := G(lookup -> X book_reservation)")

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are an airline agent."},
    {"role": "user", "content": "Book flight HAT271 for me."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "function": {"name": "lookup", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"seats": 3}'},
    {"role": "assistant", "content": "HAT271, economy, $174. Shall I book it?"},
    {"role": "user", "content": [{"type": "text", "text": "Yes, go ahead."}]},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c2", "function": {"name": "book_reservation", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c2", "content": '{"ok": true}'},
    {"role": "assistant", "content": "Booked."},
]


def test_tool_cannot_take_a_dialogue_name() -> None:
    """A tool call named user_message is an error; a message event must carry its name."""
    with pytest.raises(TraceRecordError, match="reserved for dialogue events"):
        Call("user_message", {"text": "hi"})
    with pytest.raises(TraceRecordError, match="must be named 'assistant_message'"):
        Call("user_message", {"text": "hi"}, kind="assistant")
    event = Call.message("user", "hi")
    assert (event.name, event.kind, dict(event.args), event.is_tool) == (
        "user_message",
        "user",
        {"text": "hi"},
        False,
    )
    assert event.at(3).kind == "user" and event.with_result(None).kind == "user"


def test_chat_tool_call_named_user_message_is_an_error() -> None:
    """A recorded tool call with a reserved name is a record error, not a message."""
    bad = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "x", "function": {"name": "user_message", "arguments": {}}}],
        }
    ]
    with pytest.raises(TraceRecordError, match="reserved for dialogue events"):
        trace_from_json(bad, source="bad.json")


def test_spec_cannot_declare_a_dialogue_event_as_a_tool() -> None:
    """`tool user_message` is a spec error; a spec declaring tools may still name messages."""
    with pytest.raises(SpecError, match="dialogue event, not a tool"):
        parse_spec("tool user_message(text: str)")
    spec = parse_spec("tool book(x: str)\nconstraint c := G(book -> O user_message(text ~ /yes/))")
    assert spec_mentions_dialogue(spec)
    assert not spec_mentions_dialogue(NEXT)


def test_the_per_spec_answer_is_remembered_per_object_and_stays_right() -> None:
    """spec_mentions_dialogue answers each of many Spec objects as a fresh walk does,
    asked again and again (the firewall asks at every message; the cache keeps a few)."""
    texts = [
        "constraint c := G(lookup -> O user_message(text ~ /yes/))",
        "constraint c := G(lookup -> X book_reservation)",
    ]
    specs = [parse_spec(texts[i % 2]) for i in range(40)]
    for _ in range(3):
        for i, spec in enumerate(specs):
            assert spec_mentions_dialogue(spec) is (i % 2 == 0)
            assert spec_mentions_dialogue(spec.constraints) is (i % 2 == 0)


def test_openai_chat_keeps_messages_on_request() -> None:
    """messages=True keeps each user and assistant message in order; the default drops them."""
    trace = trace_from_json(CHAT, messages=True)
    assert trace.names == (
        "user_message",
        "assistant_message",
        "lookup",
        "assistant_message",
        "user_message",
        "assistant_message",
        "book_reservation",
        "assistant_message",
        "final_answer",
    )
    assert dict(trace[4].args) == {"text": "Yes, go ahead.", "tool_calls": 0}
    assert dict(trace[1].args) == {"text": "", "tool_calls": 1}
    assert trace.metrics["num_tool_calls"] == 2
    tools_only = trace_from_json(CHAT)
    assert tools_only.names == ("lookup", "book_reservation", "final_answer")
    assert tools_only.metrics[DROPPED_MESSAGES] == 6


def test_records_round_trip_keeps_the_kind() -> None:
    """Call.to_record writes the kind and Trace.from_records reads it back."""
    trace = trace_from_json(CHAT, messages=True)
    back = Trace.from_records([c.to_record() for c in trace])
    assert [(c.name, c.kind) for c in back] == [(c.name, c.kind) for c in trace]
    assert back.metrics["num_tool_calls"] == 2
    with pytest.raises(TraceRecordError, match="does not fit the name"):
        Trace.from_records([{"tool_name": "lookup", "kind": "user"}])


def test_spec_naming_messages_sees_them_and_others_do_not() -> None:
    """The confirmation spec reads the user's yes; an X spec still means the next tool call."""
    assert verify_trace(CHAT, CONFIRM).label == "FULL"
    assert verify_trace(CHAT, NEXT).label == "FULL"  # lookup's next *tool call* is the booking
    refused = [*CHAT[:5], {"role": "user", "content": "No."}, *CHAT[6:]]
    assert verify_trace(refused, CONFIRM).label == "NONE"
    full = trace_from_json(CHAT, messages=True)
    assert [r.label for r in verify_traces([full, refused], CONFIRM)] == ["FULL", "NONE"]
    assert holds(r"F(user_message(text ~ /yes/i) & F book_reservation)", CHAT)
    assert holds("G(lookup -> X book_reservation)", CHAT)


def test_spec_naming_messages_refuses_a_trace_loaded_without_them() -> None:
    """A trace whose messages were dropped cannot be judged by a dialogue spec: an error."""
    with pytest.raises(TraceError, match="messages=True"):
        verify_trace(trace_from_json(CHAT), CONFIRM)


def test_anthropic_user_tool_results_are_not_user_messages() -> None:
    """Only text blocks make a user message; an assistant turn counts its tool_use blocks."""
    messages = [
        {"role": "user", "content": "Cancel ZFA04Y."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "t1", "name": "get_reservation", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "found"}],
        },
    ]
    trace = trace_from_json(messages, messages=True)
    assert trace.names == ("user_message", "assistant_message", "get_reservation")
    assert dict(trace[1].args) == {"text": "Checking.", "tool_calls": 1}


def test_langchain_and_smolagents_formats_carry_the_user_turns() -> None:
    """A HumanMessage (not agentguard's note) and a smolagents TaskStep are user messages."""
    lc = [
        {"type": "human", "data": {"content": "hello"}},
        {"type": "human", "data": {"content": "blocked", "name": "agentguard"}},
        {"type": "ai", "data": {"content": "hi there", "tool_calls": []}},
    ]
    trace = trace_from_json(lc, messages=True)
    assert trace.names == ("user_message", "assistant_message", "final_answer")
    steps = [
        {"task": "refund A1"},
        {
            "step_number": 1,
            "tool_calls": [
                {
                    "id": "1",
                    "type": "function",
                    "function": {"name": "final_answer", "arguments": {"answer": "ok"}},
                }
            ],
            "observations": "ok",
        },
    ]
    assert trace_from_json(steps, messages=True).names == ("user_message", "final_answer")


def test_tau2_positions_follow_the_dropped_messages(tmp_path: Path) -> None:
    """tau2's user tool-call positions and tool errors are renumbered without messages."""
    from tests.pec.tau_runs import tau2_results, tau2_simulation, write_json

    run = tau2_simulation("airline", "8", dialogue={3: [("user", "yes")]})
    path = write_json(tmp_path / "r.json", tau2_results("airline", [run]))
    (full,) = load_traces(path, messages=True)
    (tools,) = load_traces(path)
    assert full.trace is not None and tools.trace is not None
    assert tools.trace.names == tuple(c.name for c in full.trace if c.is_tool)
    assert full.trace.metrics["num_tool_calls"] == tools.trace.metrics["num_tool_calls"] == 4
    assert "user_message" in full.trace.names


def test_firewall_judges_observed_messages(tmp_path: Path) -> None:
    """observe() advances the monitor: a booking is blocked until the user said yes."""
    log = tmp_path / "log.jsonl"
    fw = Firewall(CONFIRM, log_path=log, keep_trace=True)
    fw.observe("user", "Book HAT271.")
    assert not fw.propose("book_reservation", {}).executes
    fw.observe("assistant", "Shall I book it?")
    fw.observe("user", "yes")
    decision = fw.propose("book_reservation", {})
    assert decision.executes
    fw.complete(fw.start(decision), {"ok": True})
    report = fw.finish()
    assert report.trace.names == (
        "user_message",
        "assistant_message",
        "user_message",
        "book_reservation",
    )
    assert report.trace.metrics["num_tool_calls"] == 1
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["kind"] for e in events if e["event"] == "agentguard.message"] == [
        "user",
        "assistant",
        "user",
    ]
    (loaded,) = load_traces(log, messages=True)
    assert loaded.trace is not None
    assert verify_trace(loaded.trace, CONFIRM).to_dict() == report.compliance.to_dict()


def test_firewall_without_dialogue_spec_only_logs_messages(tmp_path: Path) -> None:
    """A spec naming no message keeps X meaning the next tool call online too."""
    log = tmp_path / "log.jsonl"
    fw = Firewall(NEXT, log_path=log, keep_trace=True)
    d = fw.propose("lookup", {})
    fw.complete(fw.start(d), 1)
    assert fw.observe("assistant", "found it") == []
    d = fw.propose("book_reservation", {})
    fw.complete(fw.start(d), 2)
    report = fw.finish()
    assert report.trace.names == ("lookup", "book_reservation")
    assert report.compliance.label == "FULL"
    (loaded,) = load_traces(log, messages=True)
    assert loaded.trace is not None and "assistant_message" in loaded.trace.names
    assert verify_trace(loaded.trace, NEXT).to_dict() == report.compliance.to_dict()


def test_firewall_refuses_a_proposal_named_like_a_message() -> None:
    """Proposing user_message is an error: it is no tool."""
    fw = Firewall(CONFIRM, keep_trace=True)
    with pytest.raises(TraceRecordError, match="reserved"):
        fw.propose("user_message", {"text": "yes"})


def test_firewall_state_keeps_messages() -> None:
    """save_state / restore carries the observed messages with their kind."""
    fw = Firewall(CONFIRM, keep_trace=True)
    fw.observe("user", "yes")
    again = Firewall.restore(CONFIRM, fw.save())
    assert again.trace[0].kind == "user"
    assert again.propose("book_reservation", {}).executes


def test_message_can_violate_a_hard_stop() -> None:
    """A message that breaks a HARD_STOP constraint stops the run, as a result would."""
    spec = parse_spec(
        "constraint quiet severity HARD_STOP := G !assistant_message(text ~ /secret/)"
    )
    fw = Firewall(spec, keep_trace=True)
    (late,) = fw.observe("assistant", "the secret is 42")
    assert late.constraint == "quiet" and fw.stopped


def test_pec_episodes_exclude_messages(tmp_path: Path) -> None:
    """Dialogue events never count toward T: a tau2 run's episode has its tool calls only."""
    from agentguard.pec.episode import Episode, episode_from_trace
    from agentguard.pec.errors import PecError
    from agentguard.pec.tau_files import tau_episode
    from tests.pec.tau_runs import tau2_simulation

    run = tau2_simulation("airline", "8", dialogue={3: [("user", "yes")]})
    episode = tau_episode(run, "tau2", {}, "run.json")
    assert all(c.is_tool for c in episode.calls) and episode.horizon == 4
    trace = trace_from_json(CHAT, messages=True)
    assert [c.name for c in episode_from_trace(trace, task_id="t", success=True).calls] == [
        "lookup",
        "book_reservation",
    ]
    with pytest.raises(PecError, match="dialogue event"):
        Episode("t", (Call.message("user", "hi"),), True)
