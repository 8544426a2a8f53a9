"""Monitors of one spec start from one cached prototype and share none of their run state."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor import prototype as proto_module
from agentguard.monitor.compiled import compile_spec
from agentguard.monitor.nodes import Node
from agentguard.monitor.prototype import CACHE_SIZE, prototype
from agentguard.monitor.quant_groups import Group
from agentguard.semantics.evaluator import holds
from agentguard.semantics.registry import Registry, default_registry
from agentguard.trace.model import DIALOGUE_NAMES, Call, Trace
from tests.monitor.strategies import formulas
from tests.strategies import data_formulas, quantified
from tests.strategies import traces as data_traces

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

SHARED_PARTS = frozenset({"machine", "plan", "registry", "_letters", "match", "formula"})
"""Attributes a clone shares with its template by design: compiled, read-only or pure memos."""


def registry() -> Registry:
    reg = Registry()
    reg.register_context_predicate("long_run", lambda trace, i, metrics: len(trace) > 3)
    return reg


REGISTRY = registry()


# Every kind of node: automata (one with a metrics budget), a counter too large to unroll,
# quantifiers (over a list, over a result domain, in a boolean combination), a fallback.
KINDS = parse_spec(
    """
tool open(id: int)
tool use(id: int)
tool close(id?: int)
constraint precede := G(use -> O open)
constraint budget := metrics.num_tool_calls <= 4
constraint unrolled := CalledN(open, 3, <=)
constraint counter := CalledN(use, 1000000000, <=)
constraint live := F close
constraint each := forall o: G(use(id = o) -> O open(id = o))
constraint listed := forall o in [1, 2]: G(use(id = o) -> O open(id = o))
constraint results := forall o in results(open): F close(id = o)
constraint both := (forall o: G(use(id = o) -> O open(id = o))) & (exists o: F close(id = o))
constraint late := Predicate(long_run)
""",
    registry=REGISTRY,
)


def ids_of(node: Any) -> set[int]:
    """The ids of the mutable containers (and groups) a node holds, one level into groups."""
    out: set[int] = set()
    for name, value in vars(node).items():
        if name in SHARED_PARTS:
            continue
        if isinstance(value, (list, dict, set, Group)):
            out.add(id(value))
        if isinstance(value, dict):
            out.update(id(g) for g in value.values() if isinstance(g, Group))
            out.update(id(g.values) for g in value.values() if isinstance(g, Group))
    for child in getattr(node, "children", ()):
        out |= ids_of(child)
    return out


def calls_of(trace: list[tuple[str, int]]) -> list[Call]:
    return [Call(name, {"id": i}, {"id": i}) for name, i in trace]


steps = st.lists(
    st.tuples(st.sampled_from(["open", "use", "close", "final_answer"]), st.integers(0, 3)),
    max_size=8,
)


def test_a_clone_owns_every_container_it_mutates() -> None:
    """A clone of every node kind holds none of its template's lists, dicts, sets or groups,
    and the same attributes; the compiled parts are shared."""
    m = Monitor(KINDS, registry=REGISTRY)
    for call in calls_of([("open", 1), ("use", 1), ("open", 2), ("close", 1)]):
        m.step(call)
    for c in KINDS.constraints:
        node: Node = m.node(c.name)
        clone = node.clone()
        assert type(clone) is type(node)
        assert vars(clone).keys() == vars(node).keys()
        assert not ids_of(node) & ids_of(clone), c.name
        assert clone.save() == node.save()
        assert clone.verdict() is node.verdict()
        for name in SHARED_PARTS & vars(node).keys():
            assert getattr(clone, name) is getattr(node, name)
        assert getattr(clone, "watcher", None) is None  # the clone's router sets its own


def test_monitors_of_one_spec_share_one_prototype_and_no_nodes() -> None:
    """Two monitors of one spec take one prototype; their nodes are distinct objects."""
    a, b = Monitor(KINDS, registry=REGISTRY), Monitor(KINDS, registry=REGISTRY)
    p = prototype(a.compiled, REGISTRY, a.uncounted)
    assert p is prototype(b.compiled, REGISTRY, b.uncounted)
    for c in KINDS.constraints:
        assert a.node(c.name) is not b.node(c.name)
        assert a.node(c.name) is not p.templates[c.name]
        assert not ids_of(a.node(c.name)) & ids_of(b.node(c.name))


def test_one_monitors_progress_never_shows_in_another() -> None:
    """Stepping one monitor (every node kind) leaves a sibling and a later monitor at the start."""
    start = Monitor(KINDS, registry=REGISTRY).save()
    a, b = Monitor(KINDS, registry=REGISTRY), Monitor(KINDS, registry=REGISTRY)
    for call in calls_of([("open", 1), ("use", 1), ("use", 2), ("close", 1), ("open", 3)] * 2):
        a.step(call)
    assert a.save() != start
    assert b.save() == start and Monitor(KINDS, registry=REGISTRY).save() == start
    assert dict(b.verdicts) == dict(Monitor(KINDS, registry=REGISTRY).verdicts)


@SETTINGS
@given(steps, steps, st.lists(st.booleans(), max_size=16))
def test_interleaved_monitors_each_score_their_own_trace(
    first: list[tuple[str, int]], second: list[tuple[str, int]], order: list[bool]
) -> None:
    """Two monitors of one spec, stepped in any interleaving, end as offline on their own
    traces, and each state equals a monitor's that ran its trace alone."""
    solo = []
    for trace in (first, second):
        m = Monitor(KINDS, registry=REGISTRY)
        for call in calls_of(trace):
            m.step(call)
        solo.append(m.save())
    runs = [Monitor(KINDS, registry=REGISTRY), Monitor(KINDS, registry=REGISTRY)]
    pending = [calls_of(first), calls_of(second)]
    for pick in [*order, *([False] * len(first)), *([True] * len(second))]:
        if pending[pick]:
            runs[pick].step(pending[pick].pop(0))
    for m, trace, saved in zip(runs, (first, second), solo, strict=True):
        assert m.save() == saved
        calls = tuple(c.at(i) for i, c in enumerate(calls_of(trace)))
        metrics = {"num_tool_calls": len(calls)}
        final = m.finish(metrics)
        for c in KINDS.constraints:
            expected = holds(c.formula, Trace(calls, metrics), registry=REGISTRY)
            assert (final[c.name] is Verdict.SATISFIED) == expected, c.name


@SETTINGS
@given(
    st.lists(st.one_of(formulas(), data_formulas(), quantified()), min_size=1, max_size=4),
    data_traces(),
    data_traces(),
)
def test_random_specs_monitored_twice_at_once_agree_with_offline(
    fs: list[A.Formula], one: Trace, two: Trace
) -> None:
    """Random (data, quantified) constraints: two monitors of one spec stepped alternately
    each finish as the offline evaluator on their own trace."""
    constraints = [A.Constraint(f"c{i}", f) for i, f in enumerate(fs)]
    try:
        expected = [{c.name: holds(c.formula, t) for c in constraints} for t in (one, two)]
    except AgentGuardError:
        return
    monitors = [Monitor(constraints), Monitor(constraints)]
    longest = max(len(one), len(two))
    for i in range(longest):
        for m, t in zip(monitors, (one, two), strict=True):
            if i < len(t):
                m.step(t.calls[i])
    for m, t, want in zip(monitors, (one, two), expected, strict=True):
        got = m.finish(t.metrics)
        assert {n: v is Verdict.SATISFIED for n, v in got.items()} == want


def test_restored_and_forked_monitors_do_not_touch_the_original() -> None:
    """A monitor restored from another's document, and a fork of a snapshot, go on alone."""
    a = Monitor(KINDS, registry=REGISTRY)
    for call in calls_of([("open", 1), ("use", 1), ("open", 2)]):
        a.step(call)
    saved = a.save()
    b = Monitor.restore(KINDS, saved, registry=REGISTRY)
    fork = a.fork(a.snapshot("each"))
    for call in calls_of([("use", 3), ("close", 2)]):
        b.step(call)
        fork.step(call)
    assert a.save() == saved
    assert b.verdicts["each"] is Verdict.VIOLATED and a.verdicts["each"] is Verdict.PENDING
    assert fork.verdicts["each"] is Verdict.VIOLATED


def test_a_start_that_runs_user_code_is_built_for_every_monitor() -> None:
    """A fixed domain's instances evaluate a user predicate at the start: evaluated again for
    every monitor (an impure predicate sees each), not taken from a template. (Each
    application is asked twice per start: by the node, then by the error judge's probe,
    monitor/judge.py, which must see applications the compiler may simplify away.)"""
    seen: list[int] = []
    allowed = {1, 2}
    reg = Registry()

    def ok(x: int) -> bool:
        seen.append(x)
        return x in allowed

    reg.register_predicate("ok", ok)
    spec = parse_spec(
        "tool t(i: int)\nconstraint c := forall x in [1, 2]: ok(x)\nconstraint d := G(t -> O t)",
        registry=reg,
    )
    first = Monitor(spec, registry=reg)
    p = prototype(first.compiled, reg, first.uncounted)
    assert p.templates["c"] is None and p.templates["d"] is not None and p.start is None
    assert seen[:2] == [1, 2] and sorted(seen) == [1, 1, 2, 2]
    assert first.verdicts["c"] is Verdict.SATISFIED
    allowed.clear()
    second = Monitor(spec, registry=reg)
    assert len(seen) == 8 and second.verdicts["c"] is Verdict.VIOLATED
    assert first.verdicts["c"] is Verdict.SATISFIED


def test_the_cache_is_keyed_by_compiled_spec_registry_and_uncounted_tools() -> None:
    """Another registry, other uncounted tools or another compiled spec: another prototype."""
    compiled = compile_spec(KINDS, registry=REGISTRY)
    base = prototype(compiled, REGISTRY, DIALOGUE_NAMES)
    assert prototype(compiled, REGISTRY, DIALOGUE_NAMES) is base
    assert prototype(compiled, registry(), DIALOGUE_NAMES) is not base
    assert prototype(compiled, REGISTRY, DIALOGUE_NAMES | {"final_answer"}) is not base
    other = compile_spec(KINDS.constraints[:2], registry=REGISTRY)
    assert prototype(other, REGISTRY, DIALOGUE_NAMES) is not base


def test_the_cache_is_bounded() -> None:
    """Building monitors of many specs keeps at most CACHE_SIZE prototypes."""
    for i in range(CACHE_SIZE + 10):
        Monitor([A.Constraint("c", A.Always(A.Event(f"tool{i}"), None))])
    assert len(proto_module._cache) <= CACHE_SIZE


@pytest.mark.parametrize("kind", ["forall", "exists"])
def test_a_prototype_template_is_never_stepped(kind: str) -> None:
    """After many monitors ran, the templates still save as a fresh monitor's nodes."""
    spec = parse_spec(f"constraint q := {kind} o: G(use(id = o) -> O open(id = o))")
    fresh = Monitor(spec).save()
    for n in range(3):
        m = Monitor(spec)
        for call in calls_of([("open", n), ("use", n), ("use", n + 1)]):
            with contextlib.suppress(AgentGuardError):
                m.step(call)
    p = prototype(compile_spec(spec), default_registry, DIALOGUE_NAMES)
    template = p.templates["q"]
    assert template is not None
    assert template.save() == fresh["constraints"]["q"]
