"""`.ok` / `.error` online: unknown on a proposed call, decided once it has run."""

from __future__ import annotations

from agentguard.enforcement.precondition import past_formula
from agentguard.language import parse_formula
from agentguard.monitor import Monitor, Verdict
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import Call, Trace

S, V, P = Verdict.SATISFIED, Verdict.VIOLATED, Verdict.PENDING
SPEC = "G(issue_refund -> O verify_identity.ok)"


def test_proposed_call_outcome_is_undecided() -> None:
    """Peeking `F verify_identity.ok` with the call proposed stays pending."""
    m = Monitor.for_formula(parse_formula("F verify_identity.ok"))
    peek = m.peek(Call("verify_identity"), ending=True)
    assert peek.verdicts["formula"] is P
    assert peek.final["formula"] is None


def test_committed_call_decides_the_outcome() -> None:
    """Once stepped, the call's `error` decides `.ok` / `.error`."""
    ok = Monitor.for_formula(parse_formula("F verify_identity.ok"))
    assert ok.step(Call("verify_identity")) is S
    failed = Monitor.for_formula(parse_formula("F verify_identity.ok"))
    assert failed.step(Call("verify_identity", {}, "boom", 0, True)) is P
    assert failed.finish() is V


def test_refund_after_failed_verification_is_refused() -> None:
    """After a verification that raised, a proposed refund is a violation."""
    m = Monitor.for_formula(parse_formula(SPEC))
    m.step(Call("verify_identity", {}, "boom", 0, True))
    assert m.peek(Call("issue_refund")).verdicts["formula"] is V
    good = Monitor.for_formula(parse_formula(SPEC))
    good.step(Call("verify_identity", {}, {"verified": True}, 0))
    assert good.peek(Call("issue_refund")).verdicts["formula"] is S


def test_batch_with_pending_verification_is_not_decided() -> None:
    """A refund batched after a verification that has not run yet is not decided."""
    m = Monitor.for_formula(parse_formula(SPEC))
    peek = m.peek([Call("verify_identity"), Call("issue_refund")])
    assert peek.verdicts["formula"] is P


def test_error_message_counts_as_error() -> None:
    """`Call.error` carrying a message (not a bool) counts by truthiness."""
    m = Monitor.for_formula(parse_formula("F any.error"))
    assert m.step(Call("t", {}, None, 0, "timed out")) is S  # type: ignore[arg-type]


def test_online_equals_offline() -> None:
    """Final verdicts equal the evaluator's on every outcome pattern of a short trace."""
    names = ["verify_identity", "issue_refund", "verify_identity", "issue_refund"]
    for mask in range(16):
        calls = [Call(n, {}, None, i, bool(mask >> i & 1)) for i, n in enumerate(names)]
        for text in (SPEC, "F any.error", "G(verify_identity.error -> X !issue_refund.ok)"):
            m = Monitor.for_formula(parse_formula(text))
            for c in calls:
                m.step(c)
            assert (m.finish() is S) is holds(text, Trace(calls)), (text, mask)


def test_precondition_needs_a_finished_successful_call() -> None:
    """`requires O verify_identity.ok`: a failed or still-pending verification fails it."""
    pre = past_formula(parse_formula("O verify_identity.ok"))
    assert pre is not None
    assert not pre.holds_at([Call("verify_identity"), Call("issue_refund")])
    pre.advance(Call("verify_identity", {}, "boom", 0, True))
    assert not pre.holds_at([Call("issue_refund")])
    pre.advance(Call("verify_identity", {}, "ok", 1))
    assert pre.holds_at([Call("issue_refund")])


def test_hint_asks_for_a_successful_call() -> None:
    """The repair hint says the required call must succeed."""
    m = Monitor.for_formula(parse_formula(SPEC))
    hint = m.monitor.hint("formula", Call("issue_refund"))
    assert hint == "call verify_identity successfully before calling issue_refund"
