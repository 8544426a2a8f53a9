"""Budgets in the firewall: metrics.num_tool_calls <= k stops call k+1 as it is proposed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.language import parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import Call, Trace

BUDGET = """
spec budgeted
constraint budget severity HARD_STOP := metrics.num_tool_calls <= 40
constraint searched := F search
"""


def test_the_41st_call_is_stopped() -> None:
    """A HARD_STOP budget of 40 allows 40 tool calls and stops the 41st before it runs."""
    fw = Firewall(parse_spec(BUDGET), keep_trace=True)
    for i in range(40):
        d = fw.propose("search", {"q": i})
        assert d.action is Action.ALLOW
        fw.record("search", {"q": i}, "ok")
    d = fw.propose("search", {"q": 40})
    assert d.action is Action.STOP and fw.stopped
    assert [v.constraint for v in d.violations] == ["budget"]
    assert "no further tool calls" in d.violations[0].hint
    report = fw.finish()
    assert len(report.trace) == 40 and report.compliance.score == 1.0


def test_the_final_answer_is_not_a_tool_call() -> None:
    """After exactly 40 tool calls the final answer is allowed and the run is compliant."""
    fw = Firewall(parse_spec(BUDGET), keep_trace=True)
    for i in range(40):
        fw.propose("search", {"q": i})
        fw.record("search", {"q": i}, "ok")
    assert fw.propose("final_answer", {"answer": 1}).action is Action.ALLOW
    fw.record("final_answer", {"answer": 1}, 1)
    report = fw.finish()
    assert report.trace.metrics["num_tool_calls"] == 40
    assert report.compliance.score == 1.0


def test_a_minimum_number_of_calls_is_enforced_at_the_final_answer() -> None:
    """metrics.num_tool_calls >= 2 sends back a final answer after one call, with a hint."""
    fw = Firewall(parse_spec("constraint enough := metrics.num_tool_calls >= 2"), keep_trace=True)
    fw.propose("a", {})
    fw.record("a", {}, "ok")
    d = fw.propose("final_answer", {"answer": 1})
    assert d.action is Action.BLOCK
    assert d.violations[0].hint == "make 1 more tool call before finishing"


def test_user_metrics_decide_the_report() -> None:
    """finish(metrics) with the caller's own count scores as offline with those metrics."""
    fw = Firewall(
        parse_spec("constraint budget severity TOLERATE := metrics.num_tool_calls <= 1"),
        keep_trace=True,
    )
    for name in ("a", "b"):
        d = fw.propose(name, {})
        assert d.executes
        fw.record(name, {}, "ok")
    assert fw.decisions[-1].violations[0].constraint == "budget"
    report = fw.finish({"num_tool_calls": 1})
    assert report.compliance.score == 1.0
    assert report.verdicts["budget"].value == "satisfied"


OPS = ("<=", "<", "=", ">=", ">", "!=")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(OPS),
    st.integers(0, 4),
    st.lists(st.sampled_from(["a", "b", "final_answer"]), max_size=7),
)
def test_refusals_are_definitive_and_compliance_is_offline(
    op: str, k: int, proposals: list[str]
) -> None:
    """Every refused call breaks the budget on every continuation; the report's verdict
    equals holds() and verify_trace() on the executed trace with its metrics."""
    text = f"constraint budget := metrics.num_tool_calls {op} {k}\nconstraint b := G(b -> O a)"
    spec = parse_spec(text)
    fw = Firewall(spec, soft_block_limit=1000, max_finish_sendbacks=1000, keep_trace=True)
    executed: list[str] = []
    for name in proposals:
        d = fw.propose(name, {})
        if not d.executes:
            tools = sum(1 for n in executed if n != "final_answer")
            if "budget" in {v.constraint for v in d.violations} and name != "final_answer":
                formula = spec.constraint("budget").formula
                for extra in range(3):
                    ended = Trace((), {"num_tool_calls": tools + 1 + extra})
                    assert not holds(formula, ended)
            continue
        fw.record(name, {}, "ok")
        executed.append(name)
    report = fw.finish()
    trace = Trace(
        tuple(Call(n) for n in executed),
        {"num_tool_calls": sum(1 for n in executed if n != "final_answer")},
    )
    offline = verify_trace(trace, spec)
    assert report.compliance.score == offline.score
    for c in spec.constraints:
        assert (report.verdicts[c.name].value == "satisfied") == holds(c.formula, trace)
