"""Firewalls of one spec start from one cached prototype and share none of their run state."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement import prototype as proto_module
from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.prototype import CACHE_SIZE, firewall_prototype
from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Registry
from agentguard.trace.final_tool import FINAL_TOOLS

# quantified (shared tools, a fixed domain, a boolean combination), counting (unrolled and
# a counter), a metrics budget, deferred liveness, tool declarations with a `from` source
# and a past-time `requires` (the checker's own state); blocking and tolerated severities
SPEC = parse_spec(
    """
spec shared
tool open(id: int)
tool use(id: int from results(open.id))
tool close(id?: int)
    requires O open
constraint each severity SOFT_BLOCK(1) := forall o: G(use(id = o) -> O open(id = o))
constraint listed severity TOLERATE := forall o in [1, 2]: G(use(id = o) -> O open(id = o))
constraint both severity TOLERATE
  := (forall o: G(use(id = o) -> O open(id = o))) & (exists o: F close(id = o))
constraint opens severity TOLERATE := CalledN(open, 3, <=)
constraint uses severity TOLERATE := CalledN(use, 1000000000, <=)
constraint budget severity SOFT_BLOCK(2) := metrics.num_tool_calls <= 6
constraint closes := F close
constraint no_reopen severity BLOCK_AND_WARN
  := forall o: G(close(id = o) -> G !open(id = o))
"""
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
Step = tuple[str, int]
steps = st.lists(
    st.tuples(st.sampled_from(["open", "use", "close", "final_answer"]), st.integers(0, 3)),
    max_size=9,
)


def drive(fw: Firewall, proposals: list[Step]) -> Iterator[tuple[Action, tuple[str, ...]]]:
    """Propose each call; run (and record) those allowed; yield each decision's gist."""
    for name, i in proposals:
        args: dict[str, Any] = {"id": i}
        d = fw.propose(name, args)
        if d.executes:
            fw.record(name, args, {"id": i})
        yield d.action, tuple(v.constraint for v in d.violations)


def solo(proposals: list[Step], **options: Any) -> tuple[list[tuple[Action, tuple[str, ...]]], Any]:
    """What a firewall that runs ``proposals`` alone decides, and its compliance report."""
    fw = Firewall(SPEC, keep_trace=True, **options)
    decisions = list(drive(fw, proposals))
    return decisions, fw.finish().compliance


def assert_online_is_offline(fw: Firewall) -> None:
    report = fw.finish()
    assert report.compliance == verify_trace(fw.trace, SPEC)


@SETTINGS
@given(st.lists(steps, min_size=2, max_size=3), st.lists(st.integers(0, 2), max_size=30))
def test_interleaved_firewalls_of_one_spec_each_judge_their_own_run(
    runs: list[list[Step]], schedule: list[int]
) -> None:
    """Firewalls of one spec driven through different traces in any interleaving decide as
    each would alone, and each report equals verify_trace of its own trace."""
    alone = [solo(r) for r in runs]
    firewalls = [Firewall(SPEC, keep_trace=True) for _ in runs]
    drivers = [drive(fw, r) for fw, r in zip(firewalls, runs, strict=True)]
    got: list[list[tuple[Action, tuple[str, ...]]]] = [[] for _ in runs]
    order = [k % len(runs) for k in schedule] + [k for k, r in enumerate(runs) for _ in r]
    for k in order:
        step = next(drivers[k], None)
        if step is not None:
            got[k].append(step)
    for fw, decisions, (expected, compliance) in zip(firewalls, got, alone, strict=True):
        assert decisions == expected
        assert_online_is_offline(fw)
        assert fw.finish().compliance == compliance


@SETTINGS
@given(steps, steps, steps)
def test_a_restored_firewall_and_a_sibling_go_on_alone(
    before: list[Step], after: list[Step], other: list[Step]
) -> None:
    """save() mid-run, restore in a new firewall while a sibling of the spec runs: the
    restored one decides as the original, the sibling as if alone; all score as offline."""
    original = Firewall(SPEC, keep_trace=True)
    list(drive(original, before))
    doc = original.save()
    sibling = Firewall(SPEC, keep_trace=True)
    restored = Firewall.restore(SPEC, doc)
    runs = [drive(original, after), drive(restored, after), drive(sibling, other)]
    got: list[list[tuple[Action, tuple[str, ...]]]] = [[], [], []]
    for _ in range(max(len(after), len(other))):
        for k, run in enumerate(runs):
            step = next(run, None)
            if step is not None:
                got[k].append(step)
    assert got[0] == got[1]
    mine = got[2]
    assert mine == solo(other)[0]
    assert restored.save()["calls"] == original.save()["calls"]
    for fw in (original, restored, sibling):
        assert_online_is_offline(fw)


def test_one_firewalls_progress_never_shows_in_another() -> None:
    """A value one firewall saw (a result for `from`, an opened id, a close for `requires`,
    a count) does not admit or refuse anything in a sibling of the same spec."""
    busy, idle = Firewall(SPEC, keep_trace=True), Firewall(SPEC, keep_trace=True)
    list(drive(busy, [("open", 1), ("use", 1), ("close", 1), ("open", 2), ("open", 3)]))
    assert busy.propose("use", {"id": 1}).executes
    refused = idle.propose("use", {"id": 1})
    assert not refused.executes
    assert "tool:use:dependency" in {v.constraint for v in refused.violations}
    assert "tool:close:requires" in {v.constraint for v in idle.propose("close", {}).violations}
    assert idle.monitor.save() == Firewall(SPEC, keep_trace=True).monitor.save()
    assert idle.tools._index == Firewall(SPEC, keep_trace=True).tools._index
    assert not idle.tools._index[A.Domain("results", "open", ("id",))]
    assert busy.monitor.node("opens") is not idle.monitor.node("opens")


def test_firewalls_of_one_spec_in_threads_each_judge_their_own_run() -> None:
    """Eight threads, one firewall each of the same spec, run different traces at once (the
    interpreter switching threads every microsecond): each decides as alone, scores as offline."""
    runs = [
        [(("open", "use", "close")[(k * j + j // 3) % 3], (k + j) % 4) for j in range(40)]
        + [("final_answer", 0)]
        for k in range(8)
    ]
    alone = [solo(r) for r in runs]
    firewalls = [Firewall(SPEC, keep_trace=True) for _ in runs]
    results: list[list[tuple[Action, tuple[str, ...]]]] = [[] for _ in runs]
    gate = threading.Barrier(len(runs))

    def work(k: int) -> None:
        gate.wait()
        results[k] = list(drive(firewalls[k], runs[k]))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(runs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    for fw, decisions, (expected, compliance) in zip(firewalls, results, alone, strict=True):
        assert decisions == expected
        assert fw.finish().compliance == compliance
        assert_online_is_offline(fw)


def test_firewalls_built_in_threads_at_once_take_one_prototype() -> None:
    """Many threads building the first firewalls of a new spec at once end with one
    cached prototype, and every firewall works."""
    spec = parse_spec("constraint c := forall o: G(use(id = o) -> O open(id = o))")
    built: list[Firewall] = []
    gate = threading.Barrier(6)

    def build() -> None:
        gate.wait()
        built.append(Firewall(spec, keep_trace=True))

    threads = [threading.Thread(target=build) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cached = firewall_prototype(spec, None, FINAL_TOOLS, True)
    assert cached is firewall_prototype(spec, None, FINAL_TOOLS, True)
    for fw in built:
        assert not fw.propose("use", {"id": 1}).executes


def test_the_cache_is_keyed_by_the_options_that_change_what_is_built() -> None:
    """Another registry, other final tools or enforce_tools off: another prototype; the
    same spec and options: the same."""
    base = firewall_prototype(SPEC, None, FINAL_TOOLS, True)
    assert firewall_prototype(SPEC, None, FINAL_TOOLS, True) is base
    assert firewall_prototype(SPEC, Registry(), FINAL_TOOLS, True) is not base
    assert firewall_prototype(SPEC, None, ("done",), True) is not base
    off = firewall_prototype(SPEC, None, FINAL_TOOLS, False)
    assert off is not base and not off.tools.tools
    assert Firewall(SPEC, enforce_tools=False).propose("use", {"id": 7}).executes is False
    assert "tool:use:dependency" not in {
        v.constraint
        for v in Firewall(SPEC, enforce_tools=False).propose("use", {"id": 7}).violations
    }


def test_final_tools_are_the_firewalls_own() -> None:
    """Two firewalls of one spec with different final tools: each counts and ends by its own."""
    spec = parse_spec("constraint budget := metrics.num_tool_calls <= 1")
    default, custom = (
        Firewall(spec, keep_trace=True),
        Firewall(spec, keep_trace=True, final_tools=("done",)),
    )
    for fw, final in ((default, "final_answer"), (custom, "done")):
        fw.record("a", {}, "ok")
        assert fw.propose(final, {}).executes
        fw.record(final, {}, "ok")
        assert fw.finish().compliance.score == 1.0
    assert default.monitor.uncounted != custom.monitor.uncounted


def test_a_matcher_set_after_the_first_firewall_is_used_by_the_next() -> None:
    """The registry's matcher is settable: a firewall built after set_matcher compiles with it."""
    reg = Registry()
    spec = parse_spec('constraint c := G(!refund(note = "x"))', registry=reg)
    first = Firewall(spec, registry=reg)
    assert first.monitor.match is values_match

    def loose(expected: Any, got: Any) -> bool:
        return str(expected).lower() == str(got).lower()

    reg.set_matcher(loose)
    second = Firewall(spec, registry=reg)
    assert second.monitor.match is loose
    assert second.monitor.compiled is not first.monitor.compiled
    assert Firewall(spec, registry=reg).monitor.compiled is second.monitor.compiled


def test_the_cache_is_bounded() -> None:
    """Firewalls of many specs keep at most CACHE_SIZE prototypes."""
    for i in range(CACHE_SIZE + 10):
        Firewall(A.Spec("s", (A.Constraint("c", A.Always(A.Event(f"tool{i}"), None)),)))
    assert len(proto_module._cache) <= CACHE_SIZE


@pytest.mark.parametrize("keep_trace", [True, False])
def test_a_text_spec_gets_a_working_firewall_each_time(keep_trace: bool) -> None:
    """Spec text (parsed anew per firewall) works as a Spec object does."""
    text = "constraint c := G(use -> O open)"
    for _ in range(3):
        fw = Firewall(text, keep_trace=keep_trace)
        assert not fw.propose("use", {}).executes
        fw.record("open", {}, "ok")
        assert fw.propose("use", {}).executes
