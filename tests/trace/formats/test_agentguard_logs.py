"""agentguard's own report and decision log: only executed calls form the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard import TraceRecordError, parse_spec
from agentguard.enforcement.firewall import Firewall
from agentguard.trace import load_traces, trace_from_json
from tests.trace.formats.conftest import FIXTURES, fixture

SPEC = """spec s
tool lookup(x: str)
tool pay(amount: number)
constraint cap severity SOFT_BLOCK(3) := G !pay(amount > 100)
"""


def test_report_keeps_executed_calls_only() -> None:
    """A blocked proposal is not in the trace read from FirewallReport.to_dict()."""
    t = trace_from_json(fixture("agentguard_report.json"))
    assert t.names == ("lookup_order", "final_answer") and t.metrics["run_id"] == "run-1"


def test_decision_log_gives_one_trace_per_run() -> None:
    """A decision log appended to by two runs yields one trace each, numbered by first line."""
    loaded = load_traces(FIXTURES / "agentguard_decisions.jsonl")
    assert [(r.record, r.format) for r in loaded] == [(1, "agentguard-log"), (5, "agentguard-log")]
    assert loaded[0].trace is not None and loaded[0].trace.names == ("lookup_order", "final_answer")
    assert loaded[1].trace is not None
    assert loaded[1].trace.names == ("lookup_order", "issue_refund", "final_answer")


def test_one_event_alone_is_explained() -> None:
    """A single decision event is not a trace; the error says to load the whole log."""
    event = json.loads((FIXTURES / "agentguard_decisions.jsonl").read_text().splitlines()[0])
    with pytest.raises(TraceRecordError, match="load the whole log file"):
        trace_from_json(event)


def test_live_firewall_outputs_agree(tmp_path: Path) -> None:
    """The report and the log of one real firewall run give the trace the firewall executed."""
    log = tmp_path / "d.jsonl"
    fw = Firewall(parse_spec(SPEC), run_id="r", log_path=log, keep_trace=True)
    for name, args in (("lookup", {"x": "a"}), ("pay", {"amount": 500}), ("pay", {"amount": 5})):
        if fw.propose(name, args).executes:
            fw.record(name, args, "ok")
    report = fw.finish()
    from_report = trace_from_json(json.loads(json.dumps(report.to_dict())))
    (from_log,) = load_traces(log)
    assert from_report.names == report.trace.names == ("lookup", "pay")
    assert from_log.trace is not None
    assert [(c.name, dict(c.args)) for c in from_log.trace] == [
        (c.name, dict(c.args)) for c in from_report
    ]
    assert [dict(c.args) for c in from_report] == [{"x": "a"}, {"amount": 5}]
    # the report keeps the results (the decision log does not)
    assert [c.result for c in from_report] == ["ok", "ok"]
