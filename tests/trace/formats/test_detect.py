"""The detector: which format each recorded shape is read as, overrides, and no-fit errors."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard import TraceRecordError, parse_spec, verify_trace
from agentguard.trace import Call, Trace, detect_format, format_names, trace_from_json
from agentguard.trace.loaders import load_traces
from tests.trace.formats.conftest import FIXTURES, fixture

EXPECTED = {
    "agentguard_report.json": "agentguard-report",
    "anthropic_log.json": "anthropic",
    "gemini_log.json": "gemini",
    "langchain_dumpd.json": "langchain",
    "langchain_messages_to_dict.json": "langchain",
    "langchain_model_dump.json": "langchain",
    "langgraph_state.json": "langchain",
    "openai_chat.json": "openai-chat",
    "openai_chat_legacy.json": "openai-chat",
    "openai_responses_items.json": "openai-responses",
    "openai_responses_log.json": "openai-responses",
    "smolagents_code.json": "smolagents",
    "smolagents_toolcalling.json": "smolagents",
    "smolagents_toolcalling_succinct.json": "smolagents",
}


@pytest.mark.parametrize(("name", "expected"), sorted(EXPECTED.items()))
def test_each_recorded_shape_is_detected(name: str, expected: str) -> None:
    """Every fixture is detected as the format it was recorded in."""
    assert detect_format(fixture(name)) == expected
    (loaded,) = load_traces(FIXTURES / name)
    assert loaded.format == expected and loaded.error is None


UNANSWERED = {"openai_responses_log.json"}  # the log ends on a pending call


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - UNANSWERED))
def test_one_spec_scores_every_format_alike(name: str) -> None:
    """The same refund spec passes on the same run recorded in any format."""
    spec = parse_spec(
        "constraint looked := G(issue_refund -> O lookup_order)\n"
        "constraint answered := F final_answer\n"
    )
    report = verify_trace(trace_from_json(fixture(name)), spec)
    assert report.passed, report.to_dict()


def test_explicit_format_overrides_detection() -> None:
    """format= skips detection; a shape that does not fit the named format is an error."""
    msgs = fixture("openai_chat.json")
    assert trace_from_json(msgs, format="openai-chat").names[0] == "lookup_order"
    with pytest.raises(TraceRecordError, match="format 'metrics' expects a JSON object"):
        trace_from_json(msgs, format="metrics")
    with pytest.raises(TraceRecordError, match="unknown trace format 'nope'; known: "):
        trace_from_json(msgs, format="nope")


def test_no_fit_lists_known_formats() -> None:
    """When nothing fits, the error describes the value and lists every known format."""
    with pytest.raises(TraceRecordError) as info:
        trace_from_json({"foo": 1, "bar": 2}, source="run.json")
    text = str(info.value)
    assert text.startswith("run.json: no known trace format fits an object with keys [bar, foo]")
    assert all(name in text for name in format_names())


def test_empty_list_is_an_empty_trace() -> None:
    """An empty list is an empty trace (of records)."""
    assert detect_format([]) == "records" and len(trace_from_json([])) == 0


_values = st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none())
_calls = st.builds(
    Call,
    name=st.sampled_from(["a", "b", "final_answer"]),
    args=st.dictionaries(st.sampled_from(["x", "y"]), _values, max_size=2),
    result=st.one_of(_values.filter(lambda v: not isinstance(v, str)), st.just("plain words")),
)


@given(st.lists(_calls, min_size=1, max_size=6))
def test_records_round_trip(calls: list[Call]) -> None:
    """Call records written by Call.to_record are detected as records and read back equal."""
    trace = Trace(tuple(calls))
    records: list[Any] = [c.to_record() for c in trace]
    assert detect_format(records) == "records"
    assert trace_from_json(records).calls == trace.calls
    assert trace_from_json({"tool_calls": records}).calls == trace.calls


_KEYS = st.sampled_from(
    [
        "role", "content", "tool_calls", "function", "name", "arguments", "id", "type",
        "tool_call_id", "messages", "steps", "step_number", "observations", "parts",
        "functionCall", "functionResponse", "input", "output", "call_id", "data", "args",
        "tool_use_id", "is_error", "decisions", "compliance", "action", "tool", "event",
        "message", "choices", "response", "request", "status", "tool_name", "tool_result",
    ]
)  # fmt: skip
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(["assistant", "user", "tool", "ai", "function_call", "tool_use",
                     "tool_result", "model", "agentguard.decision", "allow", "x", "{}"]),
)  # fmt: skip
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)


@given(_JSON, st.sampled_from([None, *format_names()]))
def test_any_json_gives_a_trace_or_a_trace_record_error(value: Any, name: str | None) -> None:
    """On any JSON value and any format, reading succeeds or raises TraceRecordError, nothing else."""
    detect_format(value)
    with contextlib.suppress(TraceRecordError):
        trace_from_json(value, source="fuzz", format=name)
