"""A snapshot of a constraint checked at the end (a fallback node) is a copy sharing the
kept calls, not a saved document: the firewall takes one per executed call of a
result-sensitive constraint, so it must not cost as much as the run so far."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.language import parse_spec
from agentguard.monitor import Monitor
from agentguard.monitor.fallback import FallbackNode
from agentguard.trace.model import Call

SPEC = parse_spec("constraint late := exists x in tools: Before(a, x)")
NAMES = st.lists(st.sampled_from(["a", "b", "c"]), max_size=8)


def test_a_fallback_snapshot_is_a_copy_not_a_document() -> None:
    """Monitor.snapshot of a fallback constraint takes the copy path (no saved calls)."""
    m = Monitor(SPEC)
    for name in ("b", "a"):
        m.step(Call(name))
    assert isinstance(m.node("late"), FallbackNode)
    snap = m.snapshot("late")
    assert snap.doc is None and isinstance(snap.node, FallbackNode)
    assert [c.name for c in snap.node.calls] == ["b", "a"]


@settings(max_examples=200, deadline=None)
@given(NAMES, NAMES, NAMES)
def test_a_fork_and_its_origin_go_on_independently(
    before: list[str], origin_after: list[str], fork_after: list[str]
) -> None:
    """After a snapshot, the origin and a fork of it each keep their own calls, whichever
    steps first, and each ends as a fresh monitor over its own calls would."""
    m = Monitor(SPEC)
    for name in before:
        m.step(Call(name))
    snap = m.snapshot("late")
    fork = m.fork(snap)
    # interleave: the fork steps first, then the origin, then the fork again
    half = len(fork_after) // 2
    for name in fork_after[:half]:
        fork.step(Call(name))
    for name in origin_after:
        m.step(Call(name))
    for name in fork_after[half:]:
        fork.step(Call(name))
    for monitor, names in ((m, before + origin_after), (fork, before + fork_after)):
        node = monitor.node("late")
        assert isinstance(node, FallbackNode)
        assert [c.name for c in node.calls] == names
        assert [c.position for c in node.calls] == list(range(len(names)))
        fresh = Monitor(SPEC)
        for name in names:
            fresh.step(Call(name))
        assert monitor.finish() == fresh.finish()
