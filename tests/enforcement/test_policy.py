"""The severity policy of Appendix A.5.3 as a pure function, without a monitor."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action, Violation
from agentguard.enforcement.policy import Counts, Limits, Outcome, judge
from agentguard.severity import Severity, SeverityKind

NONE = Counts({})
LIMITS = Limits(soft_block=3, finish_sendbacks=2)


def v(kind: SeverityKind, name: str = "c", limit: int | None = None) -> Violation:
    return Violation(name, Severity(kind, limit))


HARD, SOFT, WARN, TOL = (
    SeverityKind.HARD_STOP,
    SeverityKind.SOFT_BLOCK,
    SeverityKind.BLOCK_AND_WARN,
    SeverityKind.TOLERATE,
)


def test_no_violation_allows() -> None:
    """Nothing violated: ALLOW, nothing counted."""
    assert judge([], counts=NONE, limits=LIMITS) == Outcome(Action.ALLOW)


def test_hard_stop_stops() -> None:
    """HARD_STOP: STOP, not escalated."""
    assert judge([v(HARD)], counts=NONE, limits=LIMITS) == Outcome(Action.STOP)


def test_soft_block_blocks_and_counts_until_its_limit() -> None:
    """SOFT_BLOCK: BLOCK counted; at the limit it escalates to a STOP."""
    assert judge([v(SOFT)], counts=NONE, limits=LIMITS) == Outcome(Action.BLOCK, counted=("c",))
    at_limit = judge([v(SOFT)], counts=Counts({"c": 3}), limits=LIMITS)
    assert at_limit == Outcome(Action.STOP, escalated=True)


def test_a_soft_block_limit_on_the_constraint_wins_over_the_default() -> None:
    """SOFT_BLOCK(1) escalates after one block whatever the firewall default."""
    assert judge([v(SOFT, limit=1)], counts=Counts({"c": 1}), limits=LIMITS).action is Action.STOP


def test_block_and_warn_blocks_then_the_retry_overrides() -> None:
    """BLOCK_AND_WARN: BLOCK with a warning; the identical next-generation retry: OVERRIDE."""
    assert judge([v(WARN)], counts=NONE, limits=LIMITS) == Outcome(Action.BLOCK, warned=True)
    assert judge([v(WARN)], counts=NONE, limits=LIMITS, retry=True) == Outcome(Action.OVERRIDE)


def test_a_retry_does_not_override_a_soft_block_beside_the_warning() -> None:
    """A retry overrides the warning only; a SOFT_BLOCK violated too still blocks."""
    out = judge([v(WARN, "w"), v(SOFT, "s")], counts=NONE, limits=LIMITS, retry=True)
    assert out.action is Action.BLOCK and out.counted == ("s",) and out.warned


def test_tolerate_allows() -> None:
    """TOLERATE: the call runs."""
    assert judge([v(TOL)], counts=NONE, limits=LIMITS) == Outcome(Action.ALLOW)


def test_a_refused_final_answer_uses_a_sendback_until_the_limit() -> None:
    """Ending: a block is a send-back; past the limit the answer goes through, noted."""
    assert judge([v(SOFT)], counts=NONE, limits=LIMITS, ending=True).sendback
    past = judge([v(SOFT)], counts=Counts({}, sendbacks=2), limits=LIMITS, ending=True)
    assert past.action is Action.ALLOW and "Send-back limit (2)" in past.note


KINDS = st.sampled_from([HARD, SOFT, WARN, TOL])


@given(
    st.lists(st.tuples(KINDS, st.sampled_from("abc")), max_size=5),
    st.dictionaries(st.sampled_from("abc"), st.integers(0, 5)),
    st.booleans(),
)
def test_the_strongest_action_wins(
    found: list[tuple[SeverityKind, str]], counts: dict[str, int], retry: bool
) -> None:
    """STOP iff a HARD_STOP or an exhausted SOFT_BLOCK; else BLOCK iff a SOFT_BLOCK or an
    unretried warning; a refused call never runs, an allowed one counts nothing."""
    violations = [v(k, n) for k, n in found]
    out = judge(violations, counts=Counts(counts), limits=LIMITS, retry=retry)
    soft = [x for x in violations if x.severity.kind is SOFT]
    exhausted = any(counts.get(x.constraint, 0) >= LIMITS.soft_block for x in soft)
    if any(x.severity.kind is HARD for x in violations) or exhausted:
        assert out.action is Action.STOP
    elif soft or (not retry and any(x.severity.kind is WARN for x in violations)):
        assert out.action is Action.BLOCK
        assert set(out.counted) == {x.constraint for x in soft}
    else:
        assert out.action.executes and out.counted == ()
