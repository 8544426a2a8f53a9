"""Trace input: metrics records, JSON Lines, chat logs, and bad records named by file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard import Trace, TraceError, TraceRecordError, load_traces
from agentguard.trace.model import UNKNOWN


def test_json_results_are_decoded() -> None:
    """Results recorded as JSON text are decoded; plain text stays text."""
    t = Trace.from_records(
        [
            {"tool_name": "a", "arguments": {}, "tool_result": '{"numbers": [1]}'},
            {"tool_name": "b", "arguments": '{"x": 1}', "tool_result": "plain words"},
            {"tool_name": "c"},
        ]
    )
    assert t[0].result == {"numbers": [1]}
    assert t[1].args == {"x": 1} and t[1].result == "plain words"
    assert t[2].result is UNKNOWN and t.names == ("a", "b", "c")


def test_malformed_records_name_the_record() -> None:
    """A record without a tool name, or with non-object arguments, is a TraceRecordError."""
    with pytest.raises(TraceRecordError, match="tool call 1 has no 'tool_name'"):
        Trace.from_records([{"tool_name": "a"}, {"arguments": {}}])
    with pytest.raises(TraceRecordError, match="arguments must be an object"):
        Trace.from_records([{"tool_name": "a", "arguments": [1]}])
    with pytest.raises(TraceRecordError, match="no 'tool_calls'"):
        Trace.from_metrics({"num_steps": 1})


def test_jsonl_keeps_good_records_and_reports_bad_lines(tmp_path: Path) -> None:
    """In JSON Lines, bad lines are reported by line number and the good ones still load."""
    path = tmp_path / "runs.jsonl"
    lines = [
        json.dumps({"tool_calls": [{"tool_name": "a"}]}),
        "{not json",
        "",
        json.dumps({"tool_calls": [{"arguments": {}}]}),
        json.dumps(
            {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "s", "arguments": "{}"}}],
                    }
                ]
            }
        ),
    ]
    path.write_text("\n".join(lines) + "\n")
    loaded = load_traces(path)
    assert [r.record for r in loaded] == [1, 2, 4, 5]
    assert loaded[0].trace is not None and loaded[0].trace.names == ("a",)
    assert loaded[1].error is not None and f"{path}:2: invalid JSON" in str(loaded[1].error)
    assert loaded[2].error is not None and f"{path}:4:" in str(loaded[2].error)
    assert loaded[3].trace is not None and loaded[3].trace.names == ("s",)


def test_json_list_of_metrics_records(tmp_path: Path) -> None:
    """A .json file holding a list of metrics records yields one trace each."""
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([{"tool_calls": [{"tool_name": "a"}]}, {"tool_calls": "nope"}]))
    loaded = load_traces(path)
    assert loaded[0].trace is not None
    assert loaded[1].error is not None and "'tool_calls' must be a list" in str(loaded[1].error)


def test_unreadable_file_is_a_trace_error(tmp_path: Path) -> None:
    """A missing file raises TraceError naming it."""
    with pytest.raises(TraceError, match="cannot read trace file"):
        load_traces(tmp_path / "missing.json")
