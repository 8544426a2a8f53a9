"""A Firewall without ``keep_trace`` keeps no per-call history and decides exactly as one with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.reporting import TraceNotKeptError
from agentguard.language import ast as A
from agentguard.language import parse_formula, parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.severity import Severity, SeverityKind
from agentguard.trace import load_traces
from tests.monitor.strategies import LETTERS, formulas

SEVERITIES = st.sampled_from(
    [
        Severity(SeverityKind.TOLERATE),
        Severity(SeverityKind.BLOCK_AND_WARN),
        Severity(SeverityKind.SOFT_BLOCK, 2),
        Severity(SeverityKind.HARD_STOP),
    ]
)
RESULT_TESTS = [
    parse_formula("G !a(result.ok = false)"),
    parse_formula("G(b -> O a(result.ok = true))"),
]
STEPS = st.lists(st.tuples(st.sampled_from(LETTERS), st.booleans(), st.booleans()), max_size=10)


def spec_of(constraints: list[tuple[A.Formula, Severity]]) -> A.Spec:
    return A.Spec(
        "s", tuple(A.Constraint(f"c{i}", f, severity=s) for i, (f, s) in enumerate(constraints))
    )


CONSTRAINTS = st.lists(
    st.tuples(formulas() | st.sampled_from(RESULT_TESTS), SEVERITIES), min_size=1, max_size=3
)


def ending(fw: Firewall) -> list[Any]:
    """What the end of a run says: score, label, verdicts, stopped, and the late violations."""
    report = fw.finish()
    return [
        (report.compliance.score, report.compliance.label, dict(report.verdicts), report.stopped),
        [v.to_dict() for v in report.late_violations],
    ]


def run(spec: A.Spec, steps: list[tuple[str, bool, bool]], *, keep_trace: bool) -> list[Any]:
    """Every decision and late violation of a scripted run (a retry where BLOCK_AND_WARN warned)."""
    fw = Firewall(spec, run_id="r", keep_trace=keep_trace)
    out: list[Any] = []
    for name, ok, retry in steps:
        for _ in range(2 if retry else 1):
            d = fw.propose(name, {})
            out.append(d.to_dict())
            if d.executes:
                late = fw.record(name, {}, {"ok": ok}, error="failed" if not ok and retry else None)
                out.append([v.to_dict() for v in late])
                break
    return [*out, *ending(fw)]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(CONSTRAINTS, STEPS)
def test_without_the_trace_every_decision_is_the_same(
    constraints: list[tuple[A.Formula, Severity]], steps: list[tuple[str, bool, bool]]
) -> None:
    """Decisions, late violations (shadows included), verdicts and score do not depend on keep_trace."""
    spec = spec_of(constraints)
    assert run(spec, steps, keep_trace=False) == run(spec, steps, keep_trace=True)


def run_unproposed(
    spec: A.Spec, steps: list[tuple[str, bool, bool]], *, keep_trace: bool
) -> list[Any]:
    """Late violations of calls recorded without a proposal (every other one), then the report."""
    fw = Firewall(spec, run_id="r", keep_trace=keep_trace)
    out: list[Any] = []
    for i, (name, ok, proposed) in enumerate(steps):
        if proposed and i % 2 == 0:
            d = fw.propose(name, {})
            out.append(d.to_dict())
            if not d.executes:
                continue
        out.append([v.to_dict() for v in fw.record(name, {}, {"ok": ok})])
    return [*out, *ending(fw)]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(CONSTRAINTS, STEPS)
def test_calls_recorded_without_a_proposal_start_the_same_shadows(
    constraints: list[tuple[A.Formula, Severity]], steps: list[tuple[str, bool, bool]]
) -> None:
    """Unproposed calls that break constraints are shadowed alike with and without the trace."""
    spec = spec_of(constraints)
    assert run_unproposed(spec, steps, keep_trace=False) == run_unproposed(
        spec, steps, keep_trace=True
    )


SPEC = parse_spec(
    """spec s
constraint verified severity TOLERATE := G(refund -> O verify)
constraint ok := G !search(result.found = false)
"""
)


def test_the_trace_is_not_kept_by_default_and_says_how_to_get_it() -> None:
    """fw.trace names keep_trace=True and the log; save() works without it; clean decisions are not kept."""
    fw = Firewall(SPEC)
    for _ in range(50):
        fw.record(
            "search", {"q": "x"}, {"found": True}, call_id=fw.propose("search", {"q": "x"}).call_id
        )
    assert fw.decisions == ()
    with pytest.raises(TraceNotKeptError, match=r"keep_trace=True.*log"):
        _ = fw.trace
    assert "calls" not in fw.save()  # the monitor's state, not the trace
    d = fw.propose("refund", {})  # a tolerated violation is kept
    assert fw.decisions == (d,)


def test_the_report_without_the_trace_scores_as_offline_on_the_logged_run(tmp_path: Path) -> None:
    """finish() scores from the monitor; the log's run, scored offline, gives the same verdicts."""
    log = tmp_path / "run.jsonl"
    fw = Firewall(SPEC, log_path=log)
    for name, result in [
        ("search", {"found": True}),
        ("refund", "done"),
        ("search", {"found": False}),
    ]:
        fw.record(name, {}, result, call_id=fw.propose(name, {}).call_id)
    report = fw.finish()
    assert not report.trace_kept and len(report.trace) == 0
    assert report.trace.metrics["num_tool_calls"] == 3
    offline = verify_trace(load_traces(log)[0].trace, SPEC)
    assert report.compliance.score == offline.score
    assert [c.passed for c in report.compliance.constraints] == [
        c.passed for c in offline.constraints
    ]
    kept = Firewall(SPEC, keep_trace=True)
    assert kept.finish().trace_kept
