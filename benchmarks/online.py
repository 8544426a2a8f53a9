"""Online check latency: agentguard's firewall vs re-evaluation and vs peer libraries.

Measured in one run, printed as a table and as ratios:

* p50/p99 latency of ``Firewall.propose`` (the check before a call runs) with 50
  propositional constraints, at trace lengths 1k, 10k and 100k (the latencies of the
  last ``--window`` proposals before the trace reaches that length). Two sets:
  ``paper`` = the paper's templates (10 each of Before, InOrder, G(a -> O b),
  CalledN(t, 5, <=), BranchCalled), and ``pending`` = 50 response constraints
  G(a -> F b) that are never decided (the worst case: every touched constraint moves).
* the same check done naively, re-evaluating every constraint on the whole prefix plus
  the proposed call at each step (agentguard's own vectorised offline evaluator, which
  is already faster than the paper's recursive Algorithm 1), at 10k;
* first-order: 50 constraints ``forall o: G(use_k(id = o) -> O open_k(id = o))``, each
  with ``--values`` distinct bound values;
* peers, same constraints where they can express them: ``agentltl`` 0.2.1
  (``Enforcer.check``) at 1k and 10k, ``acel-core`` (``Session.precheck`` with 50
  template contracts: 25 must_precede, 25 at_most_n_times; acel cannot express InOrder,
  Before or BranchCalled) at 1k/10k/100k.

Every constraint is TOLERATE so every call runs and the trace grows as planned.

    python benchmarks/online.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

TOOLS = [f"t{i}" for i in range(60)]


# ---------------------------------------------------------------- the constraints
def paper_constraints() -> list[tuple[str, str]]:
    """(name, agentguard text) for the paper's templates over t0..t49."""
    out = []
    for i in range(10):
        out.append((f"before{i}", f"Before(t{i}, t{i + 10})"))
        out.append((f"order{i}", f"InOrder([t{i}, t{i + 5}, t{i + 12}])"))
        out.append((f"prec{i}", f"G(t{i + 20} -> O t{i})"))
        out.append((f"count{i}", f"CalledN(t{i + 30}, 5, <=)"))
        out.append((f"branch{i}", f"BranchCalled(t{i}, t{i + 40})"))
    return out


def pending_constraints() -> list[tuple[str, str]]:
    return [(f"resp{i}", f"G(t{i} -> F t{(i + 7) % 50})") for i in range(50)]


def spec_text(constraints: list[tuple[str, str]], tools: list[str]) -> str:
    lines = ["spec bench"]
    lines += [f"tool {t}()" for t in tools]
    lines += [f"constraint {n} severity TOLERATE := {f}" for n, f in constraints]
    return "\n".join(lines)


def calls(n: int, seed: int = 0) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(n):
        yield TOOLS[rng.randrange(len(TOOLS))]


def percentiles(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.99))]


# ---------------------------------------------------------------- agentguard
def agentguard_run(
    constraints: list[tuple[str, str]], lengths: list[int], window: int
) -> dict[int, tuple[float, float]]:
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    fw = Firewall(parse_spec(spec_text(constraints, TOOLS)))
    out: dict[int, tuple[float, float]] = {}
    samples: list[float] = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for i, name in enumerate(calls(max(lengths))):
            t0 = clock()
            d = fw.propose(name, {})
            t1 = clock()
            if d.executes:
                fw.record(name, {}, "ok")
            length = i + 1
            if any(length > L - window for L in lengths if length <= L):
                samples.append((t1 - t0) / 1000)
            if length in lengths:
                out[length] = percentiles(samples[-window:])
                samples = []
    finally:
        gc.enable()
    return out


def naive_run(constraints: list[tuple[str, str]], length: int, checks: int) -> tuple[float, float]:
    """Re-evaluate every constraint on prefix + proposed call at each step."""
    from agentguard.language import parse_formula
    from agentguard.semantics.evaluator import Evaluator
    from agentguard.trace.model import Call, Trace

    formulas = [parse_formula(f) for _, f in constraints]
    prefix = [Call(n) for n in calls(length - checks)]
    samples = []
    for name in calls(checks, seed=1):
        t0 = time.perf_counter_ns()
        trace = Trace((*prefix, Call(name)))
        ev = Evaluator(trace)
        for f in formulas:
            ev.holds(f)
        samples.append((time.perf_counter_ns() - t0) / 1000)
        prefix.append(Call(name))
    return percentiles(samples)


def first_order_run(values: int, window: int) -> tuple[float, float, int]:
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    k_count = 50
    tools = [f"open_{k}(id: int)" for k in range(k_count)] + [
        f"use_{k}(id: int)" for k in range(k_count)
    ]
    lines = ["spec fo", *(f"tool {t}" for t in tools)]
    lines += [
        f"constraint fo{k} severity TOLERATE := forall o: G(use_{k}(id = o) -> O open_{k}(id = o))"
        for k in range(k_count)
    ]
    fw = Firewall(parse_spec("\n".join(lines)))
    for k in range(k_count):  # warm-up: every constraint gets `values` distinct values
        for v in range(values):
            fw.record(f"open_{k}", {"id": v}, "ok")
    rng = random.Random(2)
    samples = []
    gc.disable()
    try:
        for _ in range(window):
            k = rng.randrange(k_count)
            name, args = (
                (f"use_{k}", {"id": rng.randrange(values)})
                if rng.random() < 0.5
                else (f"open_{k}", {"id": values + rng.randrange(values)})
            )
            t0 = time.perf_counter_ns()
            d = fw.propose(name, args)
            samples.append((time.perf_counter_ns() - t0) / 1000)
            if d.executes:
                fw.record(name, args, "ok")
    finally:
        gc.enable()
    p50, p99 = percentiles(samples)
    return p50, p99, len(fw.trace)


# ---------------------------------------------------------------- peers
def agentltl_run(lengths: list[int], checks: int) -> dict[int, tuple[float, float]]:
    import agentltl as L

    cs = []
    for i in range(10):
        cs.append(L.Constraint(f"before{i}", L.Before(f"t{i}", f"t{i + 10}")))
        cs.append(L.Constraint(f"order{i}", L.CalledInOrder([f"t{i}", f"t{i + 5}", f"t{i + 12}"])))
        cs.append(
            L.Constraint(
                f"prec{i}", L.Globally(L.Implies(L.Now(f"t{i + 20}"), L.Once(L.Now(f"t{i}"))))
            )
        )
        cs.append(L.Constraint(f"count{i}", L.CalledNTimes(f"t{i + 30}", 5, "<=")))
        cs.append(L.Constraint(f"branch{i}", L.BranchCalled(f"t{i}", f"t{i + 40}")))
    out = {}
    for length in lengths:
        e = L.Enforcer(cs, default_severity=L.ConstraintSeverity.TOLERATE)
        for name in calls(length - checks):
            e.record_completed(name, {}, result="ok")
        samples = []
        for name in calls(checks, seed=1):
            t0 = time.perf_counter_ns()
            e.check(name, {})
            samples.append((time.perf_counter_ns() - t0) / 1000)
            e.record_completed(name, {}, result="ok")
        out[length] = percentiles(samples)
    return out


def acel_run(lengths: list[int], window: int) -> dict[int, tuple[float, float]]:
    import logging

    import acel

    logging.getLogger("acel").setLevel(logging.CRITICAL)
    s = acel.Session(mode="shadow")
    # acel's verdicts are sticky (once violated, every later call is a violation) and it
    # copies the whole trace into every violation it records; its contracts here are
    # never violated (t0..t24 run first), so what is measured is its real check cost
    for i in range(25):
        s.add_contract(acel.must_precede(f"t{i}", f"t{i + 25}"))
        s.add_contract(acel.at_most_n_times(f"t{i + 10}", 10**9))
    out: dict[int, tuple[float, float]] = {}
    samples: list[float] = []
    sequence = itertools.chain(TOOLS[:25], calls(max(lengths) - 25))
    for i, name in enumerate(sequence):
        t0 = time.perf_counter_ns()
        gate = s.precheck(name, {})
        t1 = time.perf_counter_ns()
        s.postcheck(name, gate, "ok")
        length = i + 1
        samples.append((t1 - t0) / 1000)
        if length in lengths:
            out[length] = percentiles(samples[-window:])
            samples = []
    return out


# ---------------------------------------------------------------- report
def timed(label: str, fn: Callable[[], Any]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    print(f"  {label}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--window", type=int, default=1000, help="proposals measured per length")
    parser.add_argument(
        "--values", type=int, default=10_000, help="distinct values per first-order constraint"
    )
    parser.add_argument("--json", action="store_true", help="print plain JSON only")
    args = parser.parse_args(argv)
    lengths = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    window = min(args.window, 200) if args.quick else args.window
    values = min(args.values, 1_000) if args.quick else args.values

    res: dict[str, Any] = {}
    res["paper"] = timed(
        "agentguard, paper templates", lambda: agentguard_run(paper_constraints(), lengths, window)
    )
    res["pending"] = timed(
        "agentguard, pending responses",
        lambda: agentguard_run(pending_constraints(), lengths, window),
    )
    res["naive_10k"] = timed(
        "naive re-evaluation at 10k", lambda: naive_run(paper_constraints(), 10_000, 20)
    )
    res["naive_pending_10k"] = timed(
        "naive re-evaluation at 10k (responses)",
        lambda: naive_run(pending_constraints(), 10_000, 20),
    )
    res["first_order"] = timed("agentguard first-order", lambda: first_order_run(values, window))
    res["agentltl"] = timed(
        "agentltl 0.2.1", lambda: agentltl_run([1_000, 10_000], 20 if not args.quick else 5)
    )
    res["acel"] = timed("acel-core", lambda: acel_run(lengths, window))

    ag, pend, lt, ac = res["paper"], res["pending"], res["agentltl"], res["acel"]
    ratios = {
        "paper_100k_over_1k_p50": ag[lengths[-1]][0] / ag[1_000][0],
        "pending_100k_over_1k_p50": pend[lengths[-1]][0] / pend[1_000][0],
        "naive_over_agentguard_10k_p50": res["naive_10k"][0] / ag[10_000][0],
        "naive_over_agentguard_pending_10k_p50": res["naive_pending_10k"][0] / pend[10_000][0],
        "agentltl_over_agentguard_1k_p50": lt[1_000][0] / ag[1_000][0],
        "agentltl_over_agentguard_10k_p50": lt[10_000][0] / ag[10_000][0],
        "acel_over_agentguard_1k_p50": ac[1_000][0] / ag[1_000][0],
        "acel_over_agentguard_10k_p50": ac[10_000][0] / ag[10_000][0],
    }
    if args.json:
        print(
            json.dumps(
                {"results_us": {k: _jsonable(v) for k, v in res.items()}, "ratios": ratios},
                indent=2,
            )
        )
        return 0
    _print_table(res, ratios, lengths, values)
    return 0


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): list(x) for k, x in v.items()}
    return list(v)


def _print_table(
    res: dict[str, Any], ratios: dict[str, float], lengths: list[int], values: int
) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="check latency per proposed call (µs): p50 / p99")
    table.add_column("what")
    for L in lengths:
        table.add_column(f"{L // 1000}k calls", justify="right")

    def row(label: str, data: dict[int, tuple[float, float]]) -> None:
        table.add_row(
            label, *(f"{data[L][0]:.1f} / {data[L][1]:.1f}" if L in data else "-" for L in lengths)
        )

    row("agentguard, 50 paper templates", res["paper"])
    row("agentguard, 50 pending G(a -> F b)", res["pending"])
    row("naive re-evaluation, paper templates", {10_000: res["naive_10k"]})
    row("naive re-evaluation, G(a -> F b)", {10_000: res["naive_pending_10k"]})
    row("agentltl 0.2.1, same templates", res["agentltl"])
    row("acel-core, 50 must_precede/at_most", res["acel"])
    fo = res["first_order"]
    table.add_row(
        f"agentguard first-order, 50 x {values} values", f"{fo[0]:.1f} / {fo[1]:.1f}", "", ""
    )
    console = Console()
    console.print(table)
    for k, v in ratios.items():
        console.print(f"{k:45s} {v:10.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
