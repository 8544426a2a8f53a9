"""A log whose last line a writer left torn (a process killed mid-write, a full disk):
the next run's lines start on a line of their own.

Before, the next run appended to the torn line: its first line was swallowed, ``check``
scored the run from its later lines as complete (a violating first call lost), and the
chain of every later run hung on a line no reader parses (outside attack round 8)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from agentguard import Firewall, load_traces, parse_spec, verify_trace
from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.report import FirewallReport

SPEC = parse_spec("constraint cap severity BLOCK_AND_WARN := G !issue_refund(amount > 500)")


def _run(log: Path, amounts: list[int]) -> FirewallReport:
    fw = Firewall(SPEC, log_path=log)
    for i, amount in enumerate(amounts):
        decision = fw.propose("issue_refund", {"order_id": str(i), "amount": amount})
        if decision.executes:
            fw.record("issue_refund", {"order_id": str(i), "amount": amount}, "ok")
    return fw.finish()


def test_a_run_after_a_torn_line_starts_on_its_own_line(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    _run(log, [10, 10])
    cut = log.read_bytes()[:-40]  # the finish line torn: no newline at the end
    log.write_bytes(cut)
    torn = cut.splitlines()[-1]
    report = _run(log, [9000, 10])
    lines = log.read_bytes().splitlines()
    at = lines.index(torn)  # the torn line stays as it was, alone on its line
    assert lines[at + 1].startswith(b'{"')  # the next run's first line is whole
    # the second run reads back whole, its refused first call included
    loaded = [r for r in load_traces(log) if r.trace is not None]
    assert [c.args["order_id"] for c in loaded[-1].trace] == ["1"]
    assert [d.action.name for d in report.decisions][:1] == ["BLOCK"]
    assert verify_trace(loaded[-1].trace, SPEC).score == report.compliance.score
    # the torn line is still reported: nothing hides it
    with log.open() as fh:
        assert not verify_lines(fh).ok


def test_two_runs_opening_a_torn_log_end_it_once(tmp_path: Path) -> None:
    """The line is ended under the file's lock: a second firewall opening the file adds no
    blank line (readers skip one anyway)."""
    log = tmp_path / "decisions.jsonl"
    log.write_bytes(b'{"torn": ')
    Firewall(SPEC, log_path=log)
    Firewall(SPEC, log_path=log)
    assert log.read_bytes() == b'{"torn": \n'


def test_a_line_another_run_is_still_writing_is_not_ended(tmp_path: Path) -> None:
    """An unended last line that another writer completes a moment later is not torn: the
    opener leaves it, and no blank line follows it (CI: four concurrent LangChain runs on
    one log, one line seen half-written across a page boundary)."""
    log = tmp_path / "decisions.jsonl"
    log.write_bytes(b'{"writing": ')

    def complete() -> None:
        time.sleep(0.01)
        with log.open("ab") as fh:
            fh.write(b"1}\n")

    writer = threading.Thread(target=complete)
    writer.start()
    Firewall(SPEC, log_path=log).finish()
    writer.join()
    assert b"\n\n" not in log.read_bytes()
    assert log.read_bytes().startswith(b'{"writing": 1}\n{"')


def test_runs_opening_a_log_others_write_add_no_blank_line(tmp_path: Path) -> None:
    """Runs open one log while other runs write lines longer than a page to it."""
    log = tmp_path / "decisions.jsonl"
    big = "x" * 9000

    def runs(worker: int) -> None:
        for i in range(40):
            fw = Firewall(SPEC, log_path=log)
            args = {"order_id": f"{worker}-{i}", "amount": 1, "note": big}
            fw.propose("issue_refund", args)
            fw.record("issue_refund", args, "ok")
            fw.finish()

    threads = [threading.Thread(target=runs, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = log.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert all(lines[:-1]), "a blank line in the log"
    assert len(lines) - 1 == 4 * 40 * 3
