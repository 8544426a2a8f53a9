"""Safety / mixed / liveness over finite traces, and monitor state documents."""

from __future__ import annotations

import pytest

from agentguard.language import parse_formula, parse_spec
from agentguard.monitor import Enforceability, FormulaMonitor, Monitor, MonitorStateError, Verdict
from agentguard.trace.model import Call

SAFETY, MIXED, LIVENESS = Enforceability.SAFETY, Enforceability.MIXED, Enforceability.LIVENESS


@pytest.mark.parametrize(
    ("text", "kind", "exact"),
    [
        ("G(issue_refund -> O verify_identity)", SAFETY, True),
        ("G !delete_account", SAFETY, True),
        ("G(a -> N b)", SAFETY, True),
        ("G(a -> X b)", MIXED, True),  # strong next: ending after a has no bad prefix
        ("F cite", LIVENESS, True),
        ("G(a -> F b)", LIVENESS, True),
        ("Before(a, b)", MIXED, True),
        ("BranchCalled(a, b)", MIXED, True),
        ("CalledN(a, 2, <=)", SAFETY, True),
        ("WithinSteps(a, b, 2)", MIXED, True),
        ("G !issue_refund(amount > 500)", SAFETY, False),
        ("F search(q = 1)", MIXED, False),
        ("metrics.num_tool_calls <= 40", MIXED, False),
    ],
)
def test_classification(text: str, kind: Enforceability, exact: bool) -> None:
    """Each formula gets its LTLf class; data makes it 'at least mixed' unless safety is proven."""
    c = Monitor.for_formula(parse_formula(text)).classification()
    assert (c.kind, c.exact) == (kind, exact)


def test_at_least_mixed_is_spelled_out() -> None:
    """A non-exact class says so."""
    c = Monitor.for_formula(parse_formula("F search(q = 1)")).classification()
    assert str(c) == "at least mixed"
    assert c.to_dict()["text"] == "at least mixed"


def test_quantified_safety_body_is_safety() -> None:
    """forall over a safety body is safety (a violating instance is a bad prefix)."""
    f = parse_formula("forall o: G(refund(order_id = o) -> O lookup(order_id = o))")
    assert Monitor.for_formula(f).classification().kind is SAFETY


SPEC = parse_spec(
    """
spec s
tool a()
tool b()
constraint one := G(a -> O b)
constraint two := F b
constraint three := forall x in args(a.i): F b(i = x)
"""
)


def test_spec_monitor_gives_one_verdict_per_constraint() -> None:
    """Monitor(spec) keeps a verdict per constraint, and finish gives the final ones."""
    m = Monitor(SPEC)
    assert set(m.verdicts) == {"one", "two", "three"}
    m.step(Call("a", {"i": 1}))
    assert m.verdicts["one"] is Verdict.VIOLATED
    m.step(Call("b", {"i": 1}))
    assert m.finish() == {
        "one": Verdict.VIOLATED,
        "two": Verdict.SATISFIED,
        "three": Verdict.SATISFIED,
    }


def test_state_document_is_versioned_and_checked() -> None:
    """A state from another spec or of another format is refused with a clear error."""
    m = Monitor(SPEC)
    doc = m.save()
    assert doc["format"] == "agentguard.monitor/1"
    with pytest.raises(MonitorStateError, match="different spec"):
        FormulaMonitor.restore(parse_formula("F a"), doc)
    with pytest.raises(MonitorStateError, match="format"):
        Monitor.restore(SPEC, {"format": "nope"})


def test_hint_names_the_missing_earlier_call() -> None:
    """The hint for a blocked refund is to verify identity first."""
    m = Monitor.for_formula(parse_formula("G(issue_refund -> O verify_identity)"))
    hint = m.monitor.hint("formula", Call("issue_refund"))
    assert hint == "call verify_identity before calling issue_refund"


def test_hint_for_a_pending_obligation_at_the_end() -> None:
    """The hint for finishing without a citation is to cite first."""
    m = Monitor.for_formula(parse_formula("F cite"))
    assert (
        m.monitor.hint("formula", Call("final_answer"), ending=True) == "call cite before finishing"
    )


def test_classify_helper_and_large_counts_count() -> None:
    """classify(formula) works on its own; a count above the unrolling limit is a counter
    (an upper bound is safety, as an unrolled one)."""
    from agentguard.monitor import classify

    assert str(classify(parse_formula("F cite"))) == "liveness"
    m = Monitor.for_formula(parse_formula("CalledN(a, 500, <=)"))
    assert m.step(Call("a")) is Verdict.PENDING
    assert m.finish() is Verdict.SATISFIED
    assert str(m.classification()) == "safety"
