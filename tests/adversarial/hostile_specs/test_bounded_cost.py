"""Hostile specs: every spec builds and lints in bounded time and memory, or is refused at
its place (issue 25, section 6).

Each test is a spec an attacker could hand over, and each failed before its fix: a
bounded operator unrolled into k registers (``G(b -> O[<=1000] a)`` took 204 s and 1 GB to
build), a run of ``G(a -> F[<=k] b)`` piling up k obligations (and ``F[<=k] G[<=k] a`` k
disjuncts), exploration budgeted per constraint only (a spec of many paid it many times),
six macros of 25 bytes expanding to 2^32 nodes (parse and lint hung), imports read
without a total cap, and a file imported under two names read twice (and refused as
declaring its tools twice).

Speed is never asserted. The claims are structural (registers built, entries a window
holds, bytes and files read, nodes expanded); :func:`hang_guard` is only a hang detector,
ten seconds for work that used to take minutes or never end.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest

from agentguard.analysis import lint_spec, temporal
from agentguard.cli.main import main
from agentguard.errors import SpecSemanticError
from agentguard.language import files, load_spec, macros, parse_spec
from agentguard.language.resolver import Resolver
from agentguard.monitor import Monitor, Verdict, compile_spec
from agentguard.monitor import machine as monitor_machine
from agentguard.monitor.machine import Machine
from agentguard.monitor.nodes import AutomatonNode
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, Plan, QuantPlan
from agentguard.trace.model import Call

HANG_SECONDS = 10.0
"""A hang detector, not a speed claim: each case below took minutes (or forever) before."""

MACRO_BOMB = (
    "def a(x) := x & x\n"
    "def b(x) := a(a(x))\n"
    "def c(x) := b(b(x))\n"
    "def d(x) := c(c(x))\n"
    "def e(x) := d(d(x))\n"
    "def f(x) := e(e(x))\n"
    "constraint k := G f(t)\n"
)
"""141 bytes, 2^32 atoms once expanded: each macro uses the one before twice, twice."""


class Hung(AssertionError):
    """The work did not finish within the hang detector's time."""


@contextmanager
def hang_guard(seconds: float = HANG_SECONDS) -> Iterator[None]:
    """Fail (rather than wait for minutes) when the body does not finish in ``seconds``."""

    def fire(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds:.0f} s: unbounded cost")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except Hung:  # raised anew here: the interrupted frame can lack a line number
        raise Hung(f"still running after {seconds:.0f} s: unbounded cost") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _machine(text: str, name: str = "c") -> Machine:
    plan = compile_spec(parse_spec(text)).plans[name]
    assert isinstance(plan, AutomatonPlan)
    return plan.machine


def _machines(plan: Plan) -> list[Machine]:
    if isinstance(plan, (AutomatonPlan, QuantPlan)):
        return [plan.machine]
    if isinstance(plan, BoolPlan):
        return [m for child in plan.children for m in _machines(child)]
    return []


def _state(monitor: Monitor, name: str = "c") -> tuple[Machine, int, tuple[int, ...]]:
    """The constraint's machine, and its current residual and register contents."""
    node = monitor.node(name)
    assert isinstance(node, AutomatonNode)
    residual, regs = node.machine.cstates[node.state]
    return node.machine, residual, regs


def _window_sizes(monitor: Monitor) -> list[int]:
    """How many entries each bounded operator's window holds in the monitor's state."""
    machine, _, regs = _state(monitor)
    return [
        len(machine.windows[c]) for r, c in zip(machine.registers, regs, strict=True) if r.windowed
    ]


def _largest_cube(monitor: Monitor) -> int:
    """Elements of the largest cube of the residual (what one call progresses)."""
    machine, residual, _ = _state(monitor)
    return max((len(c) for c in machine.store.residuals[residual]), default=0)


# ---------------------------------------------------------------- bounded operators
@pytest.mark.parametrize("k", [700, 1000, 10**6])
@pytest.mark.parametrize("op", ["O", "H"])
def test_a_wide_past_window_is_one_register(op: str, k: int) -> None:
    """``G(b -> O[<=k] a)`` (and ``H``) builds one register whatever k; a run keeps at most
    two window entries (the operand now, the last position it held or failed)."""
    body = "a" if op == "O" else "!a"
    text = f"constraint c := G(b -> {op}[<={k}] {body})"
    with hang_guard():
        machine = _machine(text)
        monitor = Monitor(parse_spec(text))
        sizes = []
        for name in ["a", *["x"] * 800, "b", "a", "b"]:
            monitor.step(Call(name))
            sizes += _window_sizes(monitor)
    assert len(machine.registers) == 1
    assert len(machine.store.nodes) < 16
    assert max(sizes) <= 2
    broken = k < 801 if op == "O" else True  # H: `a` held at the start, within every window
    assert (monitor.verdicts["c"] is Verdict.VIOLATED) == broken


@pytest.mark.parametrize("formula", ["G(a -> F[<=5000] b)", "G(a -> G[<=5000] !c)"])
def test_a_wide_future_bound_keeps_one_obligation_per_operand(formula: str) -> None:
    """A run of 3,000 ``a`` under ``G(a -> F[<=5000] b)`` keeps one pending ``F[<=j] b``
    (the tightest), not one per ``a``: each call costs the same whatever k."""
    monitor = Monitor(parse_spec(f"constraint c := {formula}"))
    with hang_guard():
        largest = 0
        for _ in range(3000):
            monitor.step(Call("a"))
            largest = max(largest, _largest_cube(monitor))
    assert largest <= 2
    assert monitor.verdicts["c"] is Verdict.PENDING


def test_nested_future_bounds_keep_one_obligation_per_disjunct() -> None:
    """``F[<=1000] G[<=1000] a`` kept one disjunct per pending ``G`` (32 s to build, 88 s
    for 300 calls); the weaker of two bounds on one operand now absorbs the stronger."""
    with hang_guard():
        monitor = Monitor(parse_spec("constraint c := F[<=1000] G[<=1000] a"))
        shapes = []
        for i in range(300):
            monitor.step(Call("b" if i % 7 == 0 else "a"))
            machine, residual, _ = _state(monitor)
            cubes = machine.store.residuals[residual]
            shapes.append((len(cubes), max((len(c) for c in cubes), default=0)))
    assert max(n for n, _ in shapes) <= 2
    assert max(size for _, size in shapes) <= 2


def test_many_wide_windows_explore_one_pool_for_the_spec() -> None:
    """Sixty constraints each at the state budget cost the spec's pool once (twenty
    minutes of exploring at the per-machine budget alone; unrolled, forever): the first
    ten are explored, the rest are over budget at once, and every one still catches the
    violating call."""
    text = "\n".join(f"constraint c{i} := G(b -> O[<={10**6 + i}] a)" for i in range(60))
    with hang_guard(60.0):
        compiled = compile_spec(parse_spec(text))
        monitor = Monitor(compiled)
    machines = [m for p in compiled.plans.values() for m in _machines(p)]
    assert len({id(m.pool) for m in machines}) == 1
    assert len(monitor.over_budget()) >= 50
    assert sum(len(m.cstates) for m in machines) <= monitor_machine.MAX_SPEC_EXPLORE + 100 * 60
    assert set(monitor.step(Call("b")).values()) == {Verdict.VIOLATED}


def test_lint_of_many_constraints_stops_at_the_specs_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three hundred constraints each exploring to its own clock bound: lint stops at the
    spec's bound (lowered here to one second), not three hundred times the constraint's."""
    monkeypatch.setattr(temporal, "SPEC_SECONDS", 1.0, raising=False)  # before: no such bound
    text = "\n".join(f"constraint c{i} := F[<={6000 + i}] a{i}" for i in range(300))
    spec = parse_spec(text)
    with hang_guard():
        lint_spec(spec)


def test_lint_of_a_wide_window_is_bounded() -> None:
    """``lint`` explores the same machines: a window of 10^6 steps no longer hangs it."""
    spec = parse_spec("tool a()\ntool b()\nconstraint c := G(b -> O[<=1000000] a)")
    with hang_guard():
        found = lint_spec(spec)
    assert not [w for w in found if w.kind in ("unsatisfiable", "valid")]


# ---------------------------------------------------------------- macro expansion
def test_a_doubly_exponential_macro_spec_is_refused_at_its_use() -> None:
    """141 bytes of macros expanding to 2^32 atoms: refused where the constraint uses the
    outermost macro, after at most the expansion budget's worth of work."""
    resolver = Resolver()
    with hang_guard(), pytest.raises(SpecSemanticError) as caught:
        resolver.resolve_spec(MACRO_BOMB, "bomb.ltl", None)
    (problem,) = caught.value.problems
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == (7, 19)
    assert "macro 'f' expands to more than" in problem.message
    assert "MAX_EXPANSION" in problem.message
    assert resolver.scope.expanded == macros.MAX_EXPANSION + 1


def test_nested_macro_arguments_count_against_the_budget() -> None:
    """``a(a(a(...(t))))`` doubles through arguments written in the constraint itself."""
    text = "def a(x) := x & x\nconstraint k := " + "a(" * 40 + "t" + ")" * 40
    with hang_guard(), pytest.raises(SpecSemanticError) as caught:
        parse_spec(text)
    (problem,) = caught.value.problems
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == (2, 17)


def test_lint_refuses_a_macro_bomb_at_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``agentguard lint`` on the macro bomb: exit 2 with the located refusal, no hang."""
    spec = tmp_path / "bomb.ltl"
    spec.write_text(MACRO_BOMB)
    with hang_guard():
        code = main(["lint", str(spec)])
    assert code == 2
    assert f"{spec}:7:19: macro 'f' expands to more than" in capsys.readouterr().err


# ---------------------------------------------------------------- imports
def test_forty_large_imports_are_refused_at_the_one_that_crosses_the_total(
    tmp_path: Path,
) -> None:
    """Forty imports of 850 kB, each under the per-file cap: the spec reads at most
    ``MAX_TOTAL_SPEC_BYTES``, and each import past it is refused at its line."""
    padding = ("#" + "x" * 98 + "\n") * 8500  # 850 kB that parse quickly
    for i in range(40):
        (tmp_path / f"part{i}.ltl").write_text(f"{padding}tool t{i}()\n")
    imports = "".join(f'import "part{i}.ltl"\n' for i in range(40))
    resolver = Resolver()
    with hang_guard(), pytest.raises(SpecSemanticError) as caught:
        resolver.resolve_spec(imports, str(tmp_path / "top.ltl"), tmp_path)
    lines = [p.location.line for p in caught.value.problems if p.location is not None]
    assert lines == list(range(2, 41))
    assert "MAX_TOTAL_SPEC_BYTES" in caught.value.problems[0].message
    assert resolver.declarations.reads.files == 1
    assert resolver.declarations.reads.bytes <= files.MAX_TOTAL_SPEC_BYTES


def test_an_import_tree_of_many_small_files_is_capped(tmp_path: Path) -> None:
    """More imported files than ``MAX_SPEC_FILES``: the import past the cap is refused."""
    n = files.MAX_SPEC_FILES + 20
    for i in range(n):
        (tmp_path / f"f{i}.ltl").write_text(f"tool t{i}()\n")
    top = tmp_path / "top.ltl"
    top.write_text("".join(f'import "f{i}.ltl"\n' for i in range(n)))
    with pytest.raises(SpecSemanticError) as caught:
        load_spec(top)
    first = caught.value.problems[0]
    assert first.location is not None
    assert first.location.line == files.MAX_SPEC_FILES + 1
    assert "MAX_SPEC_FILES" in first.message


def test_a_file_imported_under_two_names_is_read_once(tmp_path: Path) -> None:
    """A hard link is the same file: imported through both names it is read once (it was
    read twice, and the spec refused as declaring its tool twice)."""
    common = tmp_path / "common.ltl"
    common.write_text("tool lookup()\n")
    os.link(common, tmp_path / "alias.ltl")
    text = 'import "common.ltl"\nimport "alias.ltl"\nconstraint c := G lookup'
    resolver = Resolver()
    spec = resolver.resolve_spec(text, str(tmp_path / "top.ltl"), tmp_path)
    assert [t.name for t in spec.tools] == ["lookup"]
    assert resolver.declarations.reads.files == 1
