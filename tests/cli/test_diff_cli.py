"""``agentguard diff``: a policy change replayed on recorded runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.cli.main import main

SPECS = Path(__file__).resolve().parents[2] / "specs"
REFUND = SPECS / "refund.ltl"
TRACES = [str(SPECS / "traces" / "refund.pass.json"), str(SPECS / "traces" / "refund.fail.json")]


def stricter(tmp_path: Path) -> Path:
    """The refund spec plus a HARD_STOP on emails (the pass trace sends one)."""
    path = tmp_path / "new.ltl"
    path.write_text(
        REFUND.read_text() + "\nconstraint no_emails severity HARD_STOP := G !send_email\n"
    )
    return path


def test_the_same_spec_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """OLD == NEW: exit 0, no run listed."""
    assert main(["diff", str(REFUND), str(REFUND), *TRACES]) == 0
    assert capsys.readouterr().out.strip() == "0 of 2 run(s) change"


def test_a_new_constraint_lists_decisions_verdicts_and_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The email call now stops; the constraint's verdict and both scores change; exit 1."""
    assert main(["diff", str(REFUND), str(stricter(tmp_path)), *TRACES]) == 1
    out = capsys.readouterr().out
    assert "refund.pass.json#1:" in out
    assert "send_email: allow [] -> stop ['no_emails']" in out
    assert "constraint no_emails: absent -> violated" in out
    assert "score 1.000 (FULL) -> " in out
    assert "2 of 2 run(s) change" in out


def test_json_lists_every_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json: one entry per run with calls, constraints and score."""
    assert main(["diff", str(REFUND), str(stricter(tmp_path)), *TRACES, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["changed"] == 2
    first = doc["runs"][0]
    (changed_call,) = first["calls"]
    assert changed_call["tool"] == "send_email"
    assert changed_call["old"] == {"action": "allow", "violations": []}
    assert changed_call["new"] == {"action": "stop", "violations": ["no_emails"]}
    assert first["score"]["old"] == 1.0 and first["score"]["new"] < 1.0


def test_a_severity_change_shows_on_the_refused_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SOFT_BLOCK -> TOLERATE on identity_first turns a recorded block into an allow."""
    trace = tmp_path / "run.json"
    trace.write_text(
        json.dumps(
            {
                "num_tool_calls": 2,
                "tool_calls": [
                    {
                        "tool_name": "lookup_order",
                        "arguments": {"order_id": "A1"},
                        "tool_result": {"order_id": "A1"},
                    },
                    {
                        "tool_name": "issue_refund",
                        "arguments": {"order_id": "A1", "amount": 5},
                        "tool_result": "ok",
                    },
                ],
            }
        )
    )
    new = tmp_path / "new.ltl"
    new.write_text(
        REFUND.read_text()
        .replace("severity SOFT_BLOCK(3)", "severity TOLERATE")
        .replace("    requires O verify_identity.ok\n", "")
    )
    assert main(["diff", str(REFUND), str(new), str(trace)]) == 1
    out = capsys.readouterr().out
    assert "call 1 issue_refund: block ['identity_first', 'tool:issue_refund:requires'] -> " in out
    assert "allow ['identity_first']" in out


def test_unreadable_traces_exit_three_and_bad_specs_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken trace file is listed and exits 3; an invalid spec exits 2."""
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["diff", str(REFUND), str(REFUND), str(broken), TRACES[0]]) == 3
    assert "unreadable" in capsys.readouterr().out
    bad = tmp_path / "bad.ltl"
    bad.write_text("spec x\nconstraint c := G (")
    assert main(["diff", str(REFUND), str(bad), TRACES[0]]) == 2
