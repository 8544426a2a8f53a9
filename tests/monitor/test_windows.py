"""Bounded operators at any bound (monitor/windows.py, the bounded nodes of formula.py).

``O[<=k]``/``H[<=k]`` are one register holding a window, ``F[<=k]``/``G[<=k]`` one node with
a counter; neither was allowed to grow with k. The laws: prefix by prefix, the monitor's
truth "if the run ended here" is the offline evaluator's and a decided verdict holds for
the rest of the trace, at small, medium and huge k; for small k the verdicts equal, call
for call, those of the construction the monitor used before (every bound spelt out with
``Y``/``X``), which is exact and earliest too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.monitor import FormulaMonitor, Monitor, Verdict, compile_spec, machine
from agentguard.monitor.compiled import clear_cache
from agentguard.monitor.monitor import MonitorStateError
from agentguard.monitor.nodes import AutomatonNode
from agentguard.monitor.plans import AutomatonPlan
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import Call
from tests.monitor.strategies import trace_of

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
LETTERS: Final = ("a", "b", "c", "d")
SMALL: Final = 6
"""Bounds up to this are also checked against the unrolled construction."""

BOUNDS = st.one_of(st.integers(0, SMALL), st.integers(SMALL + 1, 40), st.integers(10**5, 10**12))
"""Small bounds, bounds a trace crosses, and bounds no trace reaches."""


def _bounded(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
    bound = st.one_of(st.none(), BOUNDS)
    return st.one_of(
        st.builds(A.Once, child, bound),
        st.builds(A.Historically, child, bound),
        st.builds(A.Eventually, child, bound),
        st.builds(A.Always, child, bound),
    )


def _others(child: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
    binary = st.sampled_from([A.And, A.Or, A.Implies, A.Until, A.Since])
    return st.one_of(
        st.builds(A.Not, child),
        st.builds(A.Next, child, st.booleans()),
        st.builds(A.Yesterday, child, st.booleans()),
        st.builds(lambda op, a, b: op(a, b), binary, child, child),
    )


def formulas() -> st.SearchStrategy[A.Formula]:
    """Formulas over a, b, c with bounded operators anywhere (future under past included)."""
    leaves = st.one_of(
        st.sampled_from([A.Event(t) for t in ("a", "b", "c")]),
        st.sampled_from([A.Const(True), A.Const(False)]),
    )
    return st.recursive(
        leaves, lambda c: st.one_of(_bounded(c), _bounded(c), _others(c)), max_leaves=7
    )


def traces(max_size: int = 50) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(LETTERS), max_size=max_size)


def unrolled(f: A.Formula) -> A.Formula:
    """``f`` with every bounded operator spelt out, as the monitor built them before:
    ``O[<=k] φ = φ | Y O[<=k-1] φ``, ``F[<=k] φ = φ | X F[<=k-1] φ``, and H, G as their
    duals (``H[<=k] φ = !O[<=k] !φ``); ``any &`` keeps the empty trace's value (O false,
    H true, even of a valid φ)."""
    if isinstance(f, (A.Const, A.Event)):
        return f
    if isinstance(f, (A.Once, A.Historically, A.Eventually, A.Always)):
        inner = unrolled(f.operand)
        if f.bound is None:
            return type(f)(inner)
        dual = isinstance(f, (A.Historically, A.Always))
        past = isinstance(f, (A.Once, A.Historically))
        phi = A.Not(inner) if dual else inner
        out = phi
        for _ in range(f.bound):
            out = A.Or(phi, A.Yesterday(out, True) if past else A.Next(out, True))
        out = A.And(A.Event(None), out)
        return A.Not(out) if dual else out
    if isinstance(f, A.Not):
        return A.Not(unrolled(f.operand))
    if isinstance(f, A.Next):
        return A.Next(unrolled(f.operand), f.strong)
    if isinstance(f, A.Yesterday):
        return A.Yesterday(unrolled(f.operand), f.strong)
    if isinstance(f, (A.And, A.Or, A.Implies, A.Until, A.Since)):
        return type(f)(unrolled(f.left), unrolled(f.right))
    raise TypeError(f"no such node in these formulas: {f!r}")


@contextmanager
def state_budget(states: int) -> Iterator[None]:
    """A smaller exploration budget for the machines compiled inside: a bound no trace
    reaches makes a machine explore to the budget, which at 5,000 states would cost a
    second per example. Verdicts stay sound (they may come late), which is what the laws
    below check; compiled machines are forgotten on both sides (a too-large mark is for
    good)."""
    clear_cache()
    try:
        with patch.object(machine, "MAX_EXPLORE", states):
            yield
    finally:
        clear_cache()


def _largest_bound(f: A.Formula) -> int:
    own = getattr(f, "bound", None) or 0
    kids = [getattr(f, n) for n in ("operand", "left", "right") if hasattr(f, n)]
    return max([own, *(_largest_bound(k) for k in kids)])


@SETTINGS
@given(formulas(), traces())
def test_prefix_truths_are_the_evaluators_at_any_bound(f: A.Formula, names: list[str]) -> None:
    """At every prefix, the truth if the run ended there equals ``holds`` on that prefix,
    and a decided verdict is the truth of the whole trace (and stays)."""
    whole = holds(f, trace_of(names))
    decided: Verdict | None = None
    with state_budget(300):
        m = FormulaMonitor(f)
        for i in range(len(names) + 1):
            v = m.step(Call(names[i - 1])) if i else m.verdict
            if decided is not None:
                assert v is decided
            if v is not Verdict.PENDING:
                decided = v
                assert (v is Verdict.SATISFIED) == whole
            assert (m.finish() is Verdict.SATISFIED) == holds(f, trace_of(names[:i]))


@SETTINGS
@given(formulas(), traces(max_size=12))
def test_verdicts_equal_the_unrolled_construction_for_small_bounds(
    f: A.Formula, names: list[str]
) -> None:
    """For bounds up to 6 the verdicts equal, call for call, the unrolled construction's
    (both are exact and earliest while within the state budget)."""
    if _largest_bound(f) > SMALL:
        return
    windowed, spelt = FormulaMonitor(f), FormulaMonitor(unrolled(f))
    if windowed.monitor.over_budget() or spelt.monitor.over_budget():
        return
    assert windowed.verdict is spelt.verdict
    for name in names:
        assert windowed.step(Call(name)) is spelt.step(Call(name))


@SETTINGS
@given(formulas(), traces(max_size=20), st.data())
def test_a_saved_window_restores_and_runs_on_identically(
    f: A.Formula, names: list[str], data: st.DataObject
) -> None:
    """A state saved mid-run (windows as ``[age, cubes]`` entries) restores through JSON and
    gives the same verdicts and end truths from there on."""
    cut = data.draw(st.integers(0, len(names)))
    with state_budget(300):
        m = FormulaMonitor(f)
        for name in names[:cut]:
            m.step(Call(name))
        again = FormulaMonitor.restore(f, json.loads(json.dumps(m.save())))
        for name in names[cut:]:
            assert m.step(Call(name)) is again.step(Call(name))
        assert m.finish() is again.finish()


@pytest.mark.parametrize("k", [0, 3, 1000, 10**9])
@pytest.mark.parametrize("op", ["O", "H"])
def test_a_bounded_past_operator_is_one_register_of_bounded_size(op: str, k: int) -> None:
    """One register whatever k, and a window of at most two entries on any run: the
    operand now and the last position where it held (``O``) or failed (``H``)."""
    spec = parse_spec(f"constraint c := G(b -> {op}[<={k}] a)")
    plan = compile_spec(spec).plans["c"]
    assert isinstance(plan, AutomatonPlan)
    assert len(plan.machine.registers) == 1
    m = Monitor(spec)
    node = m.node("c")
    assert isinstance(node, AutomatonNode)
    for name in ["a", "b", "x", "a", "x", "x", "b", "a", "a", "x"] * 30:
        m.step(Call(name))
        _, (content,) = node.machine.cstates[node.state]
        assert len(node.machine.windows[content]) <= 2


def test_a_window_ages_past_its_bound() -> None:
    """``O[<=2] a`` holds two calls after ``a`` and not three."""
    m = FormulaMonitor(A.Always(A.Implies(A.Event("b"), A.Once(A.Event("a"), 2))))
    verdicts = [m.step(Call(n)) for n in ["a", "x", "b", "x", "x", "b"]]
    assert verdicts[:5] == [Verdict.PENDING] * 5
    assert verdicts[5] is Verdict.VIOLATED


def test_a_window_over_a_future_operand_keeps_its_obligation() -> None:
    """``O[<=3](a & F c)``: the ``a`` three calls back counts once a ``c`` comes."""
    spec = parse_spec("constraint c := G(b -> O[<=3] (a & F c))")
    m = Monitor(spec)
    out = [m.step(Call(n))["c"] for n in ["a", "x", "b", "c", "b"]]
    assert out[-1] is Verdict.VIOLATED  # the second b is 4 calls after the a
    m = Monitor(spec)
    for n in ["a", "x", "b"]:
        m.step(Call(n))
    assert m.finish()["c"] is Verdict.VIOLATED  # no c ever came
    assert m.step(Call("c"))["c"] is Verdict.PENDING


def test_a_saved_window_with_an_age_past_its_bound_is_refused() -> None:
    """A document whose window holds an entry older than the bound does not fit."""
    spec = parse_spec("constraint c := G(b -> O[<=2] a)")
    m = Monitor(spec)
    m.step(Call("a"))
    doc = json.loads(json.dumps(m.save()))
    window = doc["constraints"]["c"]["state"]["regs"][0]["window"]
    window[-1][0] = 3
    with pytest.raises(MonitorStateError, match="age is out of range"):
        Monitor.restore(spec, doc)


@pytest.mark.parametrize("formula", ["G(a -> F[<=K] b)", "G(a -> G[<=K] !c)"])
def test_pending_future_bounds_on_one_operand_collapse_to_the_tightest(formula: str) -> None:
    """``F[<=i] b & F[<=j] b`` is kept as ``F[<=min] b`` (``G``: max), so a run of ``a``
    leaves one pending obligation, not one per call."""
    m = Monitor(parse_spec(f"constraint c := {formula.replace('K', str(10**6))}"))
    node = m.node("c")
    assert isinstance(node, AutomatonNode)
    for _ in range(200):
        m.step(Call("a"))
        residual, _ = node.machine.cstates[node.state]
        assert max(len(c) for c in node.machine.store.residuals[residual]) <= 2


def test_of_two_bounds_in_a_disjunction_the_weaker_absorbs_the_other() -> None:
    """``F[<=k] G[<=k] a``: the pending ``G`` obligations are disjuncts, and the weaker one
    (the smaller bound) implies nothing the stronger adds, so one is kept."""
    m = Monitor(parse_spec("constraint c := F[<=1000000] G[<=1000000] a"))
    node = m.node("c")
    assert isinstance(node, AutomatonNode)
    for _ in range(200):
        m.step(Call("a"))
        residual, _ = node.machine.cstates[node.state]
        assert len(node.machine.store.residuals[residual]) <= 2
