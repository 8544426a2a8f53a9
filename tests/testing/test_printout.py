"""agentguard.testing.printout: the lines every example prints for a guarded run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.report import FirewallReport
from agentguard.language import parse_spec
from agentguard.testing.printout import print_decision_log, print_outcome, print_run

SPEC = parse_spec(
    """
spec s
constraint identity_first severity SOFT_BLOCK(3) := G(issue_refund -> O verify_identity)
"""
)


def guarded_run(log: Path) -> FirewallReport:
    """A refund (blocked), a verification and the refund again, then the run ends."""
    fw = Firewall(SPEC, log_path=log, keep_trace=True)  # the printout shows what ran
    fw.propose("issue_refund", {"order_id": "A1"})
    for name, args in (
        ("verify_identity", {"customer_id": "C"}),
        ("issue_refund", {"order_id": "A1"}),
    ):
        fw.complete(fw.propose(name, args), {"ok": True})
    return fw.finish()


def test_print_run_shows_decisions_outcome_and_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line per decision, what ran, the score, then the log's records read with json."""
    log = tmp_path / "decisions.jsonl"
    report = guarded_run(log)
    print_run(report.decisions, report.trace, report.compliance, log)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "     block  issue_refund({'order_id': 'A1'})",
        "     allow  verify_identity({'customer_id': 'C'})",
        "     allow  issue_refund({'order_id': 'A1'})",
    ]
    assert lines[3:6] == [
        "executed: verify_identity -> issue_refund",
        "compliance: 1.0 FULL",
        f"decision log {log}, read with json:",
    ]
    records = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 + len(records)
    assert "   {'event': 'agentguard.decision', 'action': 'block', 'tool': 'issue_refund'}" in lines


def test_outcome_prefix_and_log_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A prefix names whose outcome it is; fields pick what each log line shows."""
    log = tmp_path / "decisions.jsonl"
    report = guarded_run(log)
    print_outcome(report.trace, report.compliance, prefix="C-77 ")
    print_decision_log(log, ("tool",))
    out = capsys.readouterr().out
    assert "C-77 executed: verify_identity -> issue_refund\nC-77 compliance: 1.0 FULL\n" in out
    assert "   {'tool': 'issue_refund'}" in out
    assert "'event'" not in out
