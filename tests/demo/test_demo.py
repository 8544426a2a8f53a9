"""`agentguard demo`: the guarded refund run, then the unguarded one, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentguard.demo.__main__ import main


@pytest.fixture(scope="module")
def json_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("demo-json")
    done = subprocess.run(
        [sys.executable, "-m", "agentguard.demo", "--json", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    data: dict[str, object] = json.loads(done.stdout)
    return data


def _runs(data: dict[str, object]) -> list[dict[str, object]]:
    runs = data["runs"]
    assert isinstance(runs, list)
    return runs


def test_guarded_run_refuses_the_mistakes_then_allows_the_correction(
    json_run: dict[str, object],
) -> None:
    """Refund-before-check, its repeat and the early answer are refused; the proper path runs."""
    guarded = _runs(json_run)[0]
    actions = [(a["action"], a["tool"]) for a in guarded["attempts"]]  # type: ignore[index, union-attr]
    assert actions == [
        ("block", "issue_refund"),
        ("block", "issue_refund"),
        ("block", "final_answer"),
        ("allow", "lookup_order"),
        ("allow", "verify_identity"),
        ("allow", "issue_refund"),
        ("allow", "final_answer"),
    ]
    ran = [c["tool_name"] for c in guarded["calls_run"]]  # type: ignore[index, union-attr]
    assert ran == ["lookup_order", "verify_identity", "issue_refund"]
    assert guarded["stopped"] is None


def test_unguarded_run_refunds_without_any_check(json_run: dict[str, object]) -> None:
    """Without the guard the same model refunds at once and claims success."""
    unguarded = _runs(json_run)[1]
    ran = [c["tool_name"] for c in unguarded["calls_run"]]  # type: ignore[index, union-attr]
    assert ran == ["issue_refund", "final_answer"]
    compliance = unguarded["compliance"]
    assert isinstance(compliance, dict)
    assert compliance["compliance_score"] < 1.0


def test_guarded_run_is_fully_compliant(json_run: dict[str, object]) -> None:
    """Executed calls of the guarded run satisfy every constraint."""
    compliance = _runs(json_run)[0]["compliance"]
    assert isinstance(compliance, dict)
    assert compliance["compliance_score"] == 1.0


def test_files_are_written_and_the_log_is_json_lines(json_run: dict[str, object]) -> None:
    """The decision log, traces and reports exist; every log line is a JSON object."""
    files = {k: Path(v) for k, v in _runs(json_run)[0]["files"].items()}  # type: ignore[union-attr]
    assert all(path.exists() for path in files.values())
    for line in files["decision log"].read_text(encoding="utf-8").splitlines():
        assert isinstance(json.loads(line), dict)
    trace = json.loads(files["trace"].read_text(encoding="utf-8"))
    assert [c["tool_name"] for c in trace["tool_calls"]][-1] == "final_answer"


def test_readable_output_shows_decisions_reports_and_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rich output names each decision, the final answer, both reports and the files."""
    assert main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "BLOCK" in out
    assert "ALLOW" in out
    assert "identity_first" in out
    assert "Final answer: Refunded 129.90 EUR" in out
    assert "Compliance (firewall report)" in out
    assert "Compliance (verified afterwards)" in out
    assert "without the guard" in out
    assert "guarded-decisions.jsonl" in out.replace("\n", "")


def test_cli_module_registers_the_demo_command() -> None:
    """add_parser registers `demo` with a run function and the documented options."""
    import argparse

    from agentguard.demo.cli import add_parser, run

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["demo", "--no-contrast", "--json", "--out", "x"])
    assert args.func is run
    assert args.no_contrast
    assert args.json


def test_agentguard_cli_runs_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`agentguard demo --json --no-contrast` through the main CLI runner."""
    from agentguard.cli.main import main as cli_main

    assert cli_main(["demo", "--json", "--no-contrast", "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["runs"]) == 1
    assert data["runs"][0]["compliance"]["compliance_score"] == 1.0
