"""Bounded construction: compiled once per spec, conjunctions of independent parts split."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.bench.generate import generate_suite, instance_spec_text
from agentguard.enforcement.firewall import Firewall
from agentguard.language import load_spec, parse_formula, parse_spec
from agentguard.monitor import Enforceability, FormulaMonitor, Monitor, Verdict, compile_spec
from agentguard.monitor.compiled import clear_cache
from agentguard.monitor.machine import BUDGET_HITS
from agentguard.monitor.nodes import BoolNode
from agentguard.semantics import holds
from agentguard.trace.model import Call, Trace

SPECS = Path(__file__).resolve().parents[2] / "specs"


def conjunction(n: int) -> str:
    return " & ".join(f"F t{i}" for i in range(n))


def test_forty_independent_eventualities_build_within_budget_and_exact() -> None:
    """`F t0 & … & F t39` builds within the state budget and stays exact (liveness)."""
    clear_cache()
    hits = BUDGET_HITS[0]
    m = FormulaMonitor(parse_formula(conjunction(40)))
    assert BUDGET_HITS[0] == hits  # no machine met the state budget (time: construction.py)
    c = m.classification()
    assert (c.kind, c.exact) == (Enforceability.LIVENESS, True)
    node = m.monitor.node("formula")
    assert isinstance(node, BoolNode) and node.split and not node.late
    for i in range(40):
        assert m.step(Call(f"t{i}")) is (Verdict.SATISFIED if i == 39 else Verdict.PENDING)


def test_a_split_keeps_the_earliest_violation() -> None:
    """Independent safety parts still refuse the first bad call, with the part's hint."""
    m = Monitor(parse_spec("constraint c := G(a -> O b) & G(c -> O d) & F e\n"))
    assert isinstance(m.node("c"), BoolNode)
    assert m.peek(Call("c")).verdicts["c"] is Verdict.VIOLATED
    assert m.hint("c", Call("c")) == "call d before calling c"
    assert m.hint("c", None, ending=True) == "call e before finishing"


def test_parts_that_read_foreign_calls_are_compiled_whole() -> None:
    """`G(a -> X b) & N false` is not interleavable: one machine, exact as before."""
    m = FormulaMonitor(parse_formula("(a -> X b) & X X false"))
    assert not isinstance(m.monitor.node("formula"), BoolNode)
    assert m.peek(Call("a"), ending=True).final == {"formula": False}


def test_a_large_non_interleavable_split_says_late() -> None:
    """Too many parts that count every call: split, sound, and flagged late."""
    text = " & ".join(f"G(t{i} -> X u{i})" for i in range(12))
    m = FormulaMonitor(parse_formula(text))
    node = m.monitor.node("formula")
    assert isinstance(node, BoolNode) and node.split and node.late
    assert m.classification().reason == node.late
    assert not m.classification().exact
    assert m.step(Call("t0")) is Verdict.PENDING
    assert m.step(Call("x")) is Verdict.VIOLATED  # each part is still exact on its own


_tool = st.sampled_from(["a", "b", "c", "d", "x"])
_part = st.sampled_from(
    ["F a", "G !b", "G(c -> O d)", "!c U d", "G(a -> F b)", "F x", "X c", "N false", "a"]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_part, min_size=2, max_size=4), st.lists(_tool, max_size=6))
def test_split_conjunctions_agree_with_the_evaluator(parts: list[str], names: list[str]) -> None:
    """Prefix verdicts are never wrong, and final verdicts equal the offline evaluator's."""
    f = parse_formula(" & ".join(f"({p})" for p in parts))
    m = FormulaMonitor(f)
    calls = [Call(n) for n in names]
    for i, call in enumerate(calls):
        v = m.step(call)
        prefix = Trace(tuple(c.at(j) for j, c in enumerate(calls[: i + 1])))
        if v is Verdict.VIOLATED:
            assert not holds(f, prefix)
        if v is Verdict.SATISFIED:
            assert holds(f, prefix)
    assert (m.finish() is Verdict.SATISFIED) == holds(f, Trace(tuple(calls)))


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.ltl")), ids=lambda p: p.name)
def test_every_shipped_spec_builds_within_the_state_budget(path: Path) -> None:
    """A cold build of a shipped spec stays within the state budget."""
    spec = load_spec(path)
    clear_cache()
    hits = BUDGET_HITS[0]
    assert not Monitor(spec).over_budget()
    assert BUDGET_HITS[0] == hits  # bounded work; the time is benchmarks/construction.py's


def test_every_generated_benchmark_spec_builds_within_the_state_budget() -> None:
    """The paper grid's specs each build cold within the state budget."""
    for inst in generate_suite():
        spec = parse_spec(instance_spec_text(inst))
        clear_cache()
        hits = BUDGET_HITS[0]
        assert not Monitor(spec).over_budget(), inst.id
        assert BUDGET_HITS[0] == hits, inst.id  # bounded work (time: construction.py)


def test_a_spec_is_compiled_once_and_shared() -> None:
    """Monitors and firewalls of one spec share its compiled plans; a new one is cheap."""
    spec = parse_spec("constraint c := " + conjunction(20) + "\n")
    compiled = compile_spec(spec)
    assert compile_spec(spec) is compiled
    assert compile_spec(parse_spec("constraint c := " + conjunction(20) + "\n")) is compiled
    assert Monitor(spec).compiled is compiled
    hits = BUDGET_HITS[0]
    for _ in range(3):  # a new firewall compiles nothing (its cost: construction.py)
        assert Firewall(spec, keep_trace=True).monitor.compiled is compiled
    assert BUDGET_HITS[0] == hits


def test_a_restore_reuses_the_compiled_spec() -> None:
    """Firewall.restore builds no machine: the restored monitor shares the plans."""
    spec = parse_spec("constraint c := " + conjunction(10) + "\n")
    fw = Firewall(spec, keep_trace=True)
    fw.propose("t3", {})
    other = Firewall.restore(spec, fw.save())
    assert other.monitor.compiled is fw.monitor.compiled


def test_shared_machines_are_safe_across_threads() -> None:
    """Many monitors of one compiled spec, stepped in threads, give sequential verdicts."""
    spec = parse_spec(
        "constraint a := G(refund -> O verify)\n"
        "constraint b := CalledN(search, 3, >=)\n"
        "constraint c := InOrder([search, verify, refund])\n"
    )
    clear_cache()
    runs = [[Call(n) for n in ("search", "verify", "search", "refund", "search")]] * 8
    runs += [[Call(n) for n in ("refund", "search", "verify")]] * 8
    expected = []
    for calls in runs:
        m = Monitor(spec)
        expected.append([dict(m.step(c)) for c in calls])
    clear_cache()
    results: list[list[dict[str, Verdict]] | None] = [None] * len(runs)

    def run(i: int) -> None:
        m = Monitor(spec)
        results[i] = [dict(m.step(c)) for c in runs[i]]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(runs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
