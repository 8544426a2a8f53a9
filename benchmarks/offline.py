"""Offline scoring throughput (events per second): agentguard vs a naive evaluator vs agentltl.

Usage: python benchmarks/offline.py [--quick]

Every figure is measured in the same run; the ratio column divides agentguard's
throughput by the baseline's. The naive baseline is the paper's Algorithm 1 (recursive
evaluation that re-scans suffixes/prefixes per position); it is skipped where it would
take minutes. `agentltl` (pip install agentltl==0.2.1) is the peer implementation of the
same paper; it is skipped with a note when not installed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from agentguard import Trace, parse_spec, verify_trace
from agentguard.language import ast as A

TOOLS = [f"t{i}" for i in range(10)]


def constraint_texts(count: int) -> list[str]:
    """A realistic mix: presence, order, counts, precedence, response, data tests."""
    rng = random.Random(7)
    out = []
    for k in range(count):
        a, b, c = rng.sample(TOOLS, 3)
        kind = k % 7
        out.append(
            [
                f"Called({a})",
                f"Before({a}, {b})",
                f"CalledN({a}, 3, >=)",
                f"G({b} -> O {a})",
                f"F {c}",
                f"InOrder([{a}, {b}, {c}])",
                f"G !{a}(x > 1000)",
            ][kind]
        )
    return out


def make_trace(n: int, seed: int = 1) -> Trace:
    rng = random.Random(seed)
    records = [
        {"tool_name": rng.choice(TOOLS), "arguments": {"x": rng.randint(0, 999)}, "tool_result": 1}
        for _ in range(n)
    ]
    return Trace.from_records(records)


def naive_holds(f: A.Formula, trace: Trace, i: int = 0) -> bool:
    n = len(trace)
    if isinstance(f, A.Event):
        if i >= n or (f.tool is not None and trace[i].name != f.tool):
            return False
        return all(t.op == ">" and trace[i].args.get("x", 0) > t.value.value for t in f.tests)  # type: ignore[union-attr]
    if isinstance(f, A.Not):
        return not naive_holds(f.operand, trace, i)
    if isinstance(f, A.Implies):
        return (not naive_holds(f.left, trace, i)) or naive_holds(f.right, trace, i)
    if isinstance(f, A.Always):
        return all(naive_holds(f.operand, trace, j) for j in range(i, n))
    if isinstance(f, A.Eventually):
        return any(naive_holds(f.operand, trace, j) for j in range(i, n))
    if isinstance(f, A.Once):
        return any(naive_holds(f.operand, trace, j) for j in range(i + 1))
    if isinstance(f, A.TracePredicate):
        names = trace.names
        if f.name == "Called":
            return f.args[0] in names
        if f.name == "CalledN":
            return names.count(f.args[0]) >= f.args[1]
        if f.name == "Before":
            a, b = f.args
            return a in names and b in names and names.index(a) < names.index(b)
        if f.name == "InOrder":
            it = iter(names)
            return all(t in it for t in f.args[0])
    raise TypeError(type(f).__name__)


def agentltl_constraints(texts: list[str]) -> Any:
    import agentltl as L

    out = []
    for k, text in enumerate(texts):
        f = parse_spec(f"constraint c := {text}").constraints[0].formula
        out.append(L.Constraint(f"c{k}", _to_agentltl(f, L), weight=1.0))
    return out


def _to_agentltl(f: A.Formula, L: Any) -> Any:
    if isinstance(f, A.Event):  # the peer has no argument tests on Now; the name test is kept
        return L.Now(f.tool)
    if isinstance(f, A.Not):
        return L.Not(_to_agentltl(f.operand, L))
    if isinstance(f, A.Implies):
        return L.Implies(_to_agentltl(f.left, L), _to_agentltl(f.right, L))
    if isinstance(f, A.Always):
        return L.Globally(_to_agentltl(f.operand, L))
    if isinstance(f, A.Eventually):
        return L.Eventually(_to_agentltl(f.operand, L))
    if isinstance(f, A.Once):
        return L.Once(_to_agentltl(f.operand, L))
    if isinstance(f, A.TracePredicate):
        if f.name == "Called":
            return L.Called(f.args[0])
        if f.name == "CalledN":
            return L.CalledNTimes(f.args[0], f.args[1], f.args[2])
        if f.name == "Before":
            return L.Before(*f.args)
        if f.name == "InOrder":
            return L.CalledInOrder(list(f.args[0]))
    raise TypeError(type(f).__name__)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def first_order(quick: bool) -> None:
    """50 parametric constraints over 10k distinct bound values (5k when --quick)."""
    distinct = 5_000 if quick else 10_000
    records = []
    for v in range(distinct):
        records.append({"tool_name": "lookup", "arguments": {"order": v}})
        records.append({"tool_name": "refund", "arguments": {"order": v}})
    compliant = Trace.from_records(records)
    broken = Trace.from_records(records[1:])  # the first refund has no lookup before it
    spec = parse_spec(
        "\n".join(
            f"constraint c{k} := forall o: G(refund(order = o) -> O lookup(order = o))"
            for k in range(50)
        )
    )
    print(
        f"\nfirst-order: 50 constraints `forall o: G(refund(order = o) -> O lookup(order = o))`, "
        f"{distinct:,} distinct values, {len(compliant):,} calls"
    )
    for label, trace in (("all satisfied", compliant), ("violated", broken)):
        t = best_of(lambda: verify_trace(trace, spec), 1)
        print(f"  {label:<14} {t:7.2f} s   {len(trace) / t:>12,.0f} events/s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1k and 10k only")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    try:
        import agentltl

        have_peer = True
    except ImportError:
        have_peer = False
    print(
        f"{'constraints':>11} {'calls':>8} {'agentguard ev/s':>16} {'naive ev/s':>12} {'ratio':>7} "
        f"{'agentltl ev/s':>14} {'ratio':>7}"
    )
    for count in (10, 50):
        texts = constraint_texts(count)
        spec = parse_spec("\n".join(f"constraint c{k} := {t}" for k, t in enumerate(texts)))
        peer = agentltl_constraints(texts) if have_peer else None
        for n in sizes:
            trace = make_trace(n)
            metrics = {"tool_calls": [c.to_record() for c in trace]}
            ours = best_of(lambda: verify_trace(trace, spec), 3)
            ours_rate = n / ours
            naive_rate = ratio_naive = None
            if n <= 1_000 or (n <= 10_000 and count == 10):
                t = best_of(lambda: [naive_holds(c.formula, trace) for c in spec.constraints], 1)
                naive_rate = n / t
                ratio_naive = ours_rate / naive_rate
            peer_rate = ratio_peer = None
            if peer is not None and n <= 10_000:
                import agentltl

                t = best_of(lambda: agentltl.verify_trace(metrics, peer), 1)
                peer_rate = n / t
                ratio_peer = ours_rate / peer_rate
            fmt = lambda v: f"{v:,.0f}" if v is not None else "skipped"  # noqa: E731
            fr = lambda v: f"{v:.0f}x" if v is not None else "-"  # noqa: E731
            print(
                f"{count:>11} {n:>8,} {ours_rate:>16,.0f} {fmt(naive_rate):>12} {fr(ratio_naive):>7} "
                f"{fmt(peer_rate):>14} {fr(ratio_peer):>7}"
            )
            sys.stdout.flush()
    first_order(args.quick)
    print(
        "\nnaive = the paper's Algorithm 1 (skipped at sizes where it takes minutes); "
        "agentltl skipped above 10k calls for the same reason."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
