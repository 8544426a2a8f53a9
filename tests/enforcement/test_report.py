"""A finished run's report: scored at ``finish`` from the monitor, detailed on first read."""

from __future__ import annotations

import copy
import json
import pickle
import threading
from pathlib import Path

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.report import FirewallReport, Scored
from agentguard.language import parse_spec
from agentguard.scoring.report import ComplianceReport
from agentguard.scoring.verify import verify_trace
from agentguard.trace import load_traces
from agentguard.trace.model import Trace

SPEC = parse_spec(
    """
spec s
tool lookup(order: str)
tool refund(order: str)
constraint looked := G(refund -> O lookup)
constraint answered := F final_answer
"""
)


def run(tmp_path: Path, *, refund_first: bool) -> tuple[Firewall, Path]:
    """A kept-trace run with a log: a lookup and a refund (in either order), no answer."""
    log = tmp_path / "run.jsonl"
    fw = Firewall(SPEC, keep_trace=True, log_path=log, soft_block_limit=1)
    order = ["refund", "lookup"] if refund_first else ["lookup", "refund"]
    for name in order:
        d = fw.propose(name, {"order": "A1"})
        if d.executes:
            fw.complete(fw.start(d), {"ok": True})
    return fw, log


def finish_line(log: Path) -> dict[str, object]:
    return [json.loads(x) for x in log.read_text().splitlines()][-1]


def test_the_detailed_report_is_made_on_first_read_and_equals_verify_trace(tmp_path: Path) -> None:
    """finish() does not run the offline evaluator; the first read does, once, as verify_trace would."""
    fw, _ = run(tmp_path, refund_first=False)
    report = fw.finish()
    assert not report.scored.made
    first = report.compliance
    assert report.scored.made
    assert report.compliance is first  # made once
    assert first == verify_trace(fw.trace, SPEC)
    assert first.score == 1 - 1 / 2  # F final_answer never held


def test_the_finish_line_scores_as_the_detailed_report(tmp_path: Path) -> None:
    """The log's finish line (from the monitor's verdicts) says the detailed report's score and label."""
    for refund_first in (False, True):
        fw, log = run(tmp_path / str(refund_first), refund_first=refund_first)
        report = fw.finish()
        line = finish_line(log)
        assert line["message"] == (
            f"compliance {report.compliance.score:.3f} ({report.compliance.label})"
        )
        assert line["verdict"] == report.compliance.label
        assert report.compliance == verify_trace(load_traces(log)[0].trace, SPEC)


def test_a_report_read_from_many_threads_is_made_once(tmp_path: Path) -> None:
    """Concurrent first reads evaluate once and all see the same report."""
    made: list[ComplianceReport] = []
    barrier = threading.Barrier(8)
    fw, _ = run(tmp_path, refund_first=False)
    expected = verify_trace(fw.trace, SPEC)

    def make() -> ComplianceReport:
        made.append(expected)
        return expected

    report = FirewallReport(make, (), fw.trace, False)
    seen: list[ComplianceReport] = []

    def read() -> None:
        barrier.wait()
        seen.append(report.compliance)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1
    assert all(s is expected for s in seen)


def test_reports_compare_pickle_and_copy_by_their_compliance(tmp_path: Path) -> None:
    """A lazily scored report equals an eagerly scored one, and pickles/copies with its report."""
    fw, _ = run(tmp_path, refund_first=False)
    lazy = fw.finish()
    eager = FirewallReport(
        verify_trace(fw.trace, SPEC),
        lazy.decisions,
        lazy.trace,
        lazy.stopped,
        lazy.log_path,
        lazy.run_id,
        lazy.spec_name,
        lazy.spec_hash,
        lazy.verdicts,
        lazy.late_violations,
        lazy.mode,
        lazy.trace_kept,
    )
    assert eager.scored.made
    assert lazy == eager
    back = pickle.loads(pickle.dumps(lazy))
    assert back == eager and back.scored.made
    assert copy.deepcopy(lazy) == eager
    assert lazy.to_dict() == eager.to_dict()
    assert Scored(eager.compliance) != Scored(lambda: verify_trace(Trace(fw.trace.calls[:1]), SPEC))
