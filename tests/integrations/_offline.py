"""Online = offline for a LangChain run: its report against its decision log read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.cli.main import EXIT_OK, EXIT_VIOLATION, main
from agentguard.enforcement.report import FirewallReport
from agentguard.scoring.verify import verify_trace
from agentguard.trace import load_traces


def assert_online_is_offline(
    spec_file: Path, report: FirewallReport | None, log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The middleware's report equals ``verify_trace`` of the trace its log holds on disk,
    and what ``agentguard check --json SPEC LOG`` prints for it."""
    assert report is not None
    (loaded,) = load_traces(log, messages=report.trace.has_messages)
    assert loaded.error is None and loaded.trace is not None
    assert loaded.trace.names == report.trace.names
    assert [c.result for c in loaded.trace] == [c.result for c in report.trace]
    assert verify_trace(loaded.trace, spec_file) == report.compliance
    capsys.readouterr()
    status = main(["check", "--json", str(spec_file), str(log)])
    assert status == (EXIT_OK if report.compliance.passed else EXIT_VIOLATION)
    checked: Any = json.loads(capsys.readouterr().out)
    (item,) = checked["traces"]
    assert item["report"] == report.compliance.to_dict()


def log_events(log: Path, event: str) -> list[dict[str, Any]]:
    """The log's lines of one ``event`` kind, in order."""
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [line for line in lines if line["event"] == event]


__all__ = ["assert_online_is_offline", "log_events"]
