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


FIXTURES = Path(__file__).parent / "fixtures"


def test_broken_lines_are_named_and_good_ones_load() -> None:
    """In a JSON-lines file mixing formats, each bad line is reported by line; the rest load."""
    loaded = load_traces(FIXTURES / "broken_mixed.jsonl")
    assert [(r.record, r.format) for r in loaded] == [
        (1, "metrics"),
        (2, None),
        (3, "anthropic"),
        (4, None),
        (5, None),
        (6, None),
        (8, "langchain"),
    ]
    errors = {r.record: str(r.error) for r in loaded if r.error is not None}
    where = str(FIXTURES / "broken_mixed.jsonl")
    assert errors[2].startswith(f"{where}:2: invalid JSON")
    assert errors[4].startswith(
        f"{where}:4: no known trace format fits an object with keys [hello]"
    )
    assert errors[5] == f"{where}:5: step 2 has no tool name"
    assert errors[6].startswith(f"{where}:6: message 0: arguments are not valid JSON")


def test_json_list_of_mixed_traces_names_bad_items() -> None:
    """A .json list of traces in different formats yields one per item; bad items are named."""
    loaded = load_traces(FIXTURES / "broken_list.json")
    assert [r.format for r in loaded] == ["metrics", None, "openai-chat", None]
    assert "broken_list.json:2: 'tool_calls' must be a list" in str(loaded[1].error)
    assert "broken_list.json:4: 'decisions' must be a list" in str(loaded[3].error)


def test_format_override_applies_to_every_record(tmp_path: Path) -> None:
    """load_traces(format=...) reads every record as that format, without detection."""
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps([{"tool_name": "a"}]) + "\n" + json.dumps([{"role": "user"}]) + "\n")
    loaded = load_traces(path, format="records")
    assert loaded[0].trace is not None and loaded[0].trace.names == ("a",)
    assert loaded[1].error is not None and f"{path}:2: forced format 'records'" in str(
        loaded[1].error
    )


def test_gzip_bom_and_misnamed_jsonl(tmp_path: Path) -> None:
    """Gzipped files, a UTF-8 BOM, and JSON lines saved as .json all load."""
    import gzip

    line = json.dumps({"tool_calls": [{"tool_name": "a"}]})
    gz = tmp_path / "runs.jsonl.gz"
    gz.write_bytes(gzip.compress(f"{line}\n{line}\n".encode()))
    bom = tmp_path / "run.json"
    bom.write_bytes(b"\xef\xbb\xbf" + line.encode())
    misnamed = tmp_path / "runs.json"
    misnamed.write_text(f"{line}\n{line}\n")
    assert [r.record for r in load_traces(gz)] == [1, 2]
    assert [r.trace is not None for r in load_traces(bom, misnamed)] == [True] * 3


def test_undecodable_file_is_a_trace_error(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 raise TraceError naming the file."""
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TraceError, match="cannot decode trace file"):
        load_traces(path)


def test_records_mark_tool_errors() -> None:
    """Records flagged ``is_error`` or ``status: error`` are listed as tool errors."""
    t = Trace.from_records(
        [
            {"tool_name": "a", "tool_result": "boom", "is_error": True},
            {"tool_name": "b", "tool_result": "ok"},
            {"tool_name": "c", "tool_result": "bad", "status": "error"},
        ]
    )
    assert t.tool_errors == {0, 2} and t[0].result == "boom"
    assert Trace.from_records([{"tool_name": "a"}]).metrics == {"num_tool_calls": 1}


def test_records_without_a_count_get_one() -> None:
    """num_tool_calls is derived when absent (final answers excluded) and kept when given."""
    recs = [{"tool_name": "a"}, {"tool_name": "b"}, {"tool_name": "final_answer"}]
    assert Trace.from_records(recs).metrics["num_tool_calls"] == 2
    assert Trace.from_metrics({"tool_calls": recs}).metrics["num_tool_calls"] == 2
    assert (
        Trace.from_metrics({"tool_calls": recs, "num_tool_calls": 6}).metrics["num_tool_calls"] == 6
    )


def test_tool_errors_are_marked_on_the_call() -> None:
    """A record marked as an error keeps its text as the result and sets Call.error."""
    t = Trace.from_records(
        [
            {"tool_name": "a", "tool_result": "boom", "is_error": True},
            {"tool_name": "b", "tool_result": "ok"},
        ]
    )
    assert t[0].error and t[0].result == "boom" and not t[1].error
    assert t[0].to_record()["is_error"] is True
    assert Trace.from_records([t[0].to_record()])[0].error
