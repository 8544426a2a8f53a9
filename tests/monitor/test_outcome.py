"""`.ok` / `.error` online: unknown on a proposed call, decided once it has run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.language import parse_formula
from agentguard.monitor import Monitor, Verdict
from agentguard.semantics.evaluator import holds
from agentguard.tools.precondition import past_formula
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
            assert (m.finish() is S) is holds(text, Trace(tuple(calls))), (text, mask)


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


def _outcome_formulas() -> st.SearchStrategy[A.Formula]:
    leaves = st.builds(
        A.Event,
        st.sampled_from(["a", "b", None]),
        st.just(()),
        st.sampled_from([None, "ok", "error"]),
    )
    return st.recursive(
        leaves,
        lambda c: st.one_of(
            st.builds(A.Not, c),
            st.builds(A.And, c, c),
            st.builds(A.Or, c, c),
            st.builds(A.Eventually, c),
            st.builds(A.Always, c),
            st.builds(A.Next, c, st.booleans()),
            st.builds(A.Once, c),
            st.builds(A.Until, c, c),
        ),
        max_leaves=5,
    )


_runs = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=6)


def _calls(run: list[tuple[str, bool]]) -> list[Call]:
    return [Call(n, {}, "x", i, err) for i, (n, err) in enumerate(run)]


@settings(max_examples=300, deadline=None)
@given(_outcome_formulas(), _runs)
def test_final_verdict_equals_offline_with_outcomes(
    f: A.Formula, run: list[tuple[str, bool]]
) -> None:
    """With `.ok` / `.error` atoms and failing calls, the final verdict equals `holds`."""
    calls = _calls(run)
    m = Monitor.for_formula(f)
    for c in calls:
        m.step(c)
    assert (m.finish() is S) is holds(f, Trace(tuple(calls)))


@settings(max_examples=300, deadline=None)
@given(_outcome_formulas(), _runs, st.sampled_from(["a", "b", "c"]))
def test_peek_is_sound_for_either_outcome(
    f: A.Formula, run: list[tuple[str, bool]], proposed: str
) -> None:
    """A verdict decided while the proposed call's outcome is unknown holds for both outcomes."""
    calls = _calls(run)
    m = Monitor.for_formula(f)
    for c in calls:
        m.step(c)
    verdict = m.peek(Call(proposed, {}, position=len(calls))).verdicts["formula"]
    if verdict is P:
        return
    for error in (False, True):
        again = Monitor.for_formula(f)
        for c in calls:
            again.step(c)
        assert again.step(Call(proposed, {}, "x", len(calls), error)) is verdict
