"""Hostile trace files are located record errors or refusals, never crashes or hangs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard.cli.main import EXIT_INPUT, main
from agentguard.errors import TraceError
from agentguard.trace.loaders import iter_trace_file

SPEC = Path(__file__).resolve().parents[2] / "specs" / "refund.ltl"


def test_deeply_nested_json_file_is_a_record_error(tmp_path: Path) -> None:
    """A .json file nested 200,000 levels deep is a record error, not a RecursionError."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    (rec,) = list(iter_trace_file(path))
    assert rec.error is not None and "nested too deeply" in str(rec.error)


def test_deeply_nested_jsonl_line_is_located_and_the_rest_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One deep line is reported with its line number (exit 3); the other line is scored."""
    path = tmp_path / "runs.jsonl"
    good = '{"tool_calls": [{"tool_name": "lookup_order", "arguments": {"order_id": "A"}}]}'
    path.write_text(good + "\n" + '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    assert main(["check", str(SPEC), str(path)]) == EXIT_INPUT
    captured = capsys.readouterr()
    assert f"{path}:2" in captured.err and "nested too deeply" in captured.err
    assert "lookup_order" in captured.out


def test_fifo_trace_file_is_refused(tmp_path: Path) -> None:
    """A FIFO would block the reader forever: it is refused at once."""
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        list(iter_trace_file(fifo))


def test_device_trace_file_is_refused_by_check(capsys: pytest.CaptureFixture[str]) -> None:
    """`/dev/zero` as a trace file: exit 3 with a clear message."""
    assert main(["check", str(SPEC), "/dev/zero"]) == EXIT_INPUT
    assert "not a regular file" in capsys.readouterr().err


def test_malformed_decision_log_event_is_located(tmp_path: Path) -> None:
    """A decision-log line with an unusable run_id is a record error on its line."""
    event = '{"event": "agentguard.decision", "action": "allow", "tool": "t", "args": {}'
    path = tmp_path / "log.jsonl"
    path.write_text(event + ', "run_id": "r1"}\n' + event + ', "run_id": [1]}\n')
    records = list(iter_trace_file(path))
    bad = [r for r in records if r.error is not None]
    assert [r.record for r in bad] == [2] and "run_id" in str(bad[0].error)
    assert [r.trace.names for r in records if r.trace is not None] == [("t",)]
