"""JSON Lines of metrics records read together equal each line read alone: same traces,
same codes, same errors naming the same lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard import load_traces
from agentguard.trace.call_records import read_call_record_lists, read_call_records
from agentguard.trace.loaded import load_value, loaded, loaded_each
from agentguard.trace.model import Trace
from tests.trace.test_call_records import _args, _plain_record, _results

_plain = _plain_record  # the call records a JSON Lines row may hold
_odd = st.one_of(  # records the plain path leaves to the validating one
    st.just({"name": "c", "args": '{"x": 1}'}),
    st.just({"tool_name": "user_message", "arguments": {"text": "hi"}}),
    st.just({"tool_name": ""}),
    st.just({"tool_name": "a", "arguments": [1]}),
    st.just(["not", "a", "record"]),
    st.just({"tool_name": "a", "status": "error"}),
)
_calls = st.lists(st.one_of(_plain, _plain, _plain, _odd), max_size=6)
_line = st.one_of(
    st.builds(lambda c: {"tool_calls": c}, _calls),
    st.builds(lambda c: {"tool_calls": c, "task_id": "t1", "trial": 2}, _calls),
    st.builds(lambda c: {"tool_calls": c, "num_tool_calls": 9}, _calls),
    st.just({"tool_calls": "not a list"}),
    st.just({"messages": []}),
    st.just({"decisions": [], "compliance": {}}),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(_plain, _odd), max_size=5), max_size=12))
def test_record_lists_read_together_equal_each_alone(lists: list[list[Any]]) -> None:
    """Each list's columns, read in a chunk with others, equal its columns read alone."""
    together = read_call_record_lists(lists)
    assert len(together) == len(lists)
    for records, columns in zip(lists, together, strict=True):
        if columns is None:
            continue
        alone = read_call_records(records, "<t>")
        assert columns.names == alone.names and _results(columns) == _results(alone)
        assert _args(columns) == _args(alone) and columns.errors == alone.errors
        assert columns.kinds == alone.kinds
        assert columns.tools is not None and alone.tools is not None
        assert columns.tools.codes.tolist() == alone.tools.codes.tolist()
        assert columns.tool_call_count() == alone.tool_call_count()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(_line, _line, _line, st.just("{broken")), min_size=1, max_size=10))
def test_jsonl_fast_path_equals_validating_path(tmp_path: Path, lines: list[Any]) -> None:
    """``load_traces`` on a JSON Lines file gives, line for line, what reading each line
    by itself (detection, parse, validation) gives: traces, formats, task ids, errors."""
    path = tmp_path / "runs.jsonl"
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text) + "\n")
    for format in (None, "metrics"):
        got = load_traces(path, format=format, messages=True)
        want = []
        for lineno, line in enumerate(text, start=1):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            want.append(load_value(value, str(path), lineno, format, True))
        got_good = [r for r in got if not (r.error and "invalid JSON" in r.error.message)]
        assert len(got_good) == len(want)
        for a, b in zip(got_good, want, strict=True):
            assert record_identity(a) == record_identity(b)
            assert (a.error is None) == (b.error is None)
            if a.error is not None and b.error is not None:
                assert str(a.error) == str(b.error)
            assert a.trace == b.trace
            if a.trace is not None and b.trace is not None:
                assert a.trace.names == b.trace.names
                assert a.trace.tool_codes is not None and b.trace.tool_codes is not None
                assert a.trace.tool_codes.codes.tolist() == b.trace.tool_codes.codes.tolist()


def record_identity(r: Any) -> tuple[object, ...]:
    """Where a loaded record came from and what it is (what two readings must share)."""
    return (r.source, r.record, r.format, r.task_id, r.trial)


def test_a_bad_record_sends_only_its_chunk_to_the_validating_path(monkeypatch: Any) -> None:
    """Chunks are read apart: an odd record leaves only its own chunk's lists unread."""
    from agentguard.trace import call_records

    monkeypatch.setattr(call_records, "CHUNK_RECORDS", 4)
    lists: list[list[Any]] = [[{"tool_name": "a"}, {"tool_name": "b"}] for _ in range(6)]
    lists[3] = [{"tool_name": "a"}, {"name": "b"}]
    got = read_call_record_lists(lists)
    assert [c is None for c in got] == [False, False, True, True, False, False]
    assert all(c.names == ("a", "b") for c in got if c is not None)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.one_of(_plain, _odd), max_size=5),
            st.sampled_from([{}, {"task_id": "t1", "trial": 2}, {"num_tool_calls": 9}]),
        ),
        max_size=8,
    )
)
def test_traces_built_together_equal_each_built_alone(lines: list[Any]) -> None:
    """Traces built in one loop from a chunk's columns, and their loaded records, equal
    those ``from_read_columns`` and ``loaded`` build one at a time."""
    records = [{**extra, "tool_calls": calls} for calls, extra in lines]
    columns = read_call_record_lists([r["tool_calls"] for r in records], json_rows=True)
    together = Trace.from_read_column_lists(columns, records)
    for cols, record, trace in zip(columns, records, together, strict=True):
        if cols is None:
            assert trace is None
            continue
        alone = Trace.from_read_columns(cols, record)
        assert trace is not None and trace == alone and trace.metrics == alone.metrics
        assert trace.tool_codes is alone.tool_codes and trace.has_messages == alone.has_messages
    traces = {i: t for i, t in enumerate(together, start=1) if t is not None}
    assert loaded_each(traces, "f", "metrics") == [
        loaded(t, "f", i, "metrics") for i, t in traces.items()
    ]
