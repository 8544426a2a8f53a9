"""Offline scoring throughput (events per second): agentguard vs naive evaluators vs agentltl.

Usage: python benchmarks/offline.py [--repeat 3] [--full] [--json]

One constraint mix, the same for everyone: Called, Before, CalledN(>=), G(b -> O a),
F c, InOrder, and an argument test G !a(x > 1000). agentltl 0.2.1 cannot test an
argument against a bound (its ``Now`` takes a tool name only; ``CalledWith`` matches
values exactly), so it gets the first six kinds; ``shared`` rows score exactly those six
for every tool, ``+args`` rows add the argument test for those that can express it.

Baselines, measured in the same run, interleaved, the same number of repetitions
(``--repeat``), medians reported:

* ``naive-quadratic``: the paper's Algorithm 1, a recursive evaluator re-scanning the
  suffix / prefix at each position (skipped above 1,000 events, where it takes minutes);
* ``naive-linear``: a plain-Python evaluator computing every subformula at every
  position in one backward or forward scan, O(n · |φ|);
* ``agentltl``: ``agentltl.verify_trace(metrics, constraints)``.

On single traces, loading is inside every timer (agentguard builds its ``Trace`` from
the records; the naive evaluators pull names and arguments out of them; agentltl reads
the metrics record itself); ``eval-only`` rows repeat agentguard and the linear baseline
on prebuilt inputs, so evaluation and loading can be told apart.

Two shapes: single long traces (1k and 10k events; 100k with ``--full``), and many
short traces (1,000 traces x 100 events) read from a JSON Lines file, reading and
parsing included for everyone (agentguard: ``load_traces`` + ``verify_traces``, and
``verify_trace`` per trace for comparison), with four loading-only rows in records per
second, timed among themselves over at least 9 rounds: ``load_traces``, bare
``json.loads`` per line (the target's baseline) and bare ``orjson.loads`` per line (the
parser ``load_traces`` uses), both with the collector on, as a plain loop runs, and the
parse floor: ``orjson.loads`` per line with the collector paused (as ``load_traces``
pauses it) and nothing built from the values, what any loader giving Python objects
pays at least. Finally,
first-order: 50 distinct constraints
``forall o: G(refund(order = o, lane = k) -> O lookup(order = o))`` sharing their two
tools, over ``--values`` distinct orders (10,000 by default: the target, >= 100k
events/s), with loading and eval-only, against the same evaluator deciding each
quantifier one value at a time (measured at up to 500 orders: it takes minutes at 10,000).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentguard import Trace, load_traces, parse_spec, verify_trace, verify_traces
from agentguard.language import ast as A

TOOLS = [f"t{i}" for i in range(10)]
KINDS = 7


def constraint_texts(count: int, *, with_args: bool) -> list[str]:
    rng = random.Random(7)
    out = []
    for k in range(count):
        a, b, c = rng.sample(TOOLS, 3)
        kind = k % KINDS
        if kind == 6 and not with_args:
            kind = k % 6
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


def make_records(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {"tool_name": rng.choice(TOOLS), "arguments": {"x": rng.randint(0, 1100)}, "tool_result": 1}
        for _ in range(n)
    ]


# ---------------------------------------------------------------- naive evaluators
def _event_holds(f: A.Event, name: str, args: dict[str, Any]) -> bool:
    if f.tool is not None and name != f.tool:
        return False
    return all(t.op == ">" and args.get("x", 0) > t.value.value for t in f.tests)  # type: ignore[union-attr]


def _predicate(f: A.TracePredicate, names: list[str]) -> bool:
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
    raise TypeError(f.name)


def naive_quadratic(f: A.Formula, names: list[str], args: list[dict[str, Any]], i: int = 0) -> bool:
    """The paper's Algorithm 1: recursive, re-scanning suffixes and prefixes."""
    n = len(names)
    if isinstance(f, A.Event):
        return i < n and _event_holds(f, names[i], args[i])
    if isinstance(f, A.Not):
        return not naive_quadratic(f.operand, names, args, i)
    if isinstance(f, A.Implies):
        return (not naive_quadratic(f.left, names, args, i)) or naive_quadratic(
            f.right, names, args, i
        )
    if isinstance(f, A.Always):
        return all(naive_quadratic(f.operand, names, args, j) for j in range(i, n))
    if isinstance(f, A.Eventually):
        return any(naive_quadratic(f.operand, names, args, j) for j in range(i, n))
    if isinstance(f, A.Once):
        return any(naive_quadratic(f.operand, names, args, j) for j in range(i + 1))
    if isinstance(f, A.TracePredicate):
        return _predicate(f, names)
    raise TypeError(type(f).__name__)


def naive_linear(f: A.Formula, names: list[str], args: list[dict[str, Any]]) -> list[bool]:
    """Truth at every position, one plain-Python scan per subformula: O(n · |φ|)."""
    n = len(names)
    if isinstance(f, A.Event):
        return [_event_holds(f, names[i], args[i]) for i in range(n)]
    if isinstance(f, A.Not):
        return [not v for v in naive_linear(f.operand, names, args)]
    if isinstance(f, A.Implies):
        left, right = naive_linear(f.left, names, args), naive_linear(f.right, names, args)
        return [(not x) or y for x, y in zip(left, right, strict=True)]
    if isinstance(f, (A.Always, A.Eventually)):
        inner = naive_linear(f.operand, names, args)
        out = [False] * n
        acc = isinstance(f, A.Always)
        for i in range(n - 1, -1, -1):
            acc = (acc and inner[i]) if isinstance(f, A.Always) else (acc or inner[i])
            out[i] = acc
        return out
    if isinstance(f, A.Once):
        inner = naive_linear(f.operand, names, args)
        out, seen = [False] * n, False
        for i in range(n):
            seen = seen or inner[i]
            out[i] = seen
        return out
    if isinstance(f, A.TracePredicate):
        return [_predicate(f, names)] * n
    raise TypeError(type(f).__name__)


def linear_holds(f: A.Formula, names: list[str], args: list[dict[str, Any]]) -> bool:
    if not names:
        return isinstance(f, A.Always)
    return naive_linear(f, names, args)[0]


# ---------------------------------------------------------------- agentltl
def agentltl_constraints(texts: list[str]) -> Any:
    import agentltl as L

    return [
        L.Constraint(
            f"c{k}", _to_agentltl(parse_spec(f"constraint c := {t}").constraints[0].formula, L)
        )
        for k, t in enumerate(texts)
    ]


def _to_agentltl(f: A.Formula, L: Any) -> Any:
    if isinstance(f, A.Event):
        if f.tests:
            raise ValueError("agentltl cannot test an argument against a bound")
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


# ---------------------------------------------------------------- timing
def medians(runs: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds per run; each round runs every entry once, in turn."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def check_agreement(texts: list[str], records: list[dict[str, Any]]) -> None:
    """Every evaluator gives the same verdicts before anything is timed."""
    spec = parse_spec("\n".join(f"constraint c{k} := {t}" for k, t in enumerate(texts)))
    names = [r["tool_name"] for r in records]
    args = [r["arguments"] for r in records]
    ours = [c.passed for c in verify_trace(Trace.from_records(records), spec).constraints]
    linear = [linear_holds(c.formula, names, args) for c in spec.constraints]
    if ours != linear:
        raise SystemExit(f"verdicts differ: agentguard {ours} naive-linear {linear}")


def long_traces(sizes: list[int], repeat: int, have_peer: bool) -> list[dict[str, Any]]:
    rows = []
    for count in (10, 50):
        for with_args in (False, True):
            texts = constraint_texts(count, with_args=with_args)
            spec = parse_spec("\n".join(f"constraint c{k} := {t}" for k, t in enumerate(texts)))
            peer = agentltl_constraints(texts) if have_peer and not with_args else None
            for n in sizes:
                records = make_records(n)
                check_agreement(texts, records[:300])
                formulas = [c.formula for c in spec.constraints]

                def split(
                    records: list[dict[str, Any]] = records,
                ) -> tuple[list[str], list[dict[str, Any]]]:
                    """The baselines' loading: names and arguments out of the records."""
                    return [r["tool_name"] for r in records], [r["arguments"] for r in records]

                runs: dict[str, Callable[[], object]] = {
                    "agentguard": lambda: verify_trace(Trace.from_records(records), spec),
                    "naive-linear": lambda: (
                        lambda names, args: [linear_holds(f, names, args) for f in formulas]
                    )(*split()),
                }
                # evaluation alone, loading excluded for both (it dominates agentguard's row)
                prebuilt = Trace.from_records(records)
                names, args = split()
                runs["agentguard eval-only"] = lambda: verify_trace(prebuilt, spec)
                runs["naive-linear eval-only"] = lambda: [
                    linear_holds(f, names, args) for f in formulas
                ]
                if n <= 1_000:
                    runs["naive-quadratic"] = lambda: (
                        lambda names, args: [naive_quadratic(f, names, args) for f in formulas]
                    )(*split())
                if peer is not None and n <= 10_000:
                    import agentltl

                    metrics = {"tool_calls": records}
                    runs["agentltl"] = lambda: agentltl.verify_trace(metrics, peer)
                t = medians(runs, repeat)
                rows.append(
                    {
                        "constraints": count,
                        "set": "+args" if with_args else "shared",
                        "events": n,
                        "events_per_s": {k: n / v for k, v in t.items()},
                    }
                )
                _print_row(rows[-1])
    return rows


def many_short(
    repeat: int, have_peer: bool, traces: int = 1_000, events: int = 100
) -> dict[str, Any]:
    texts = constraint_texts(10, with_args=False)
    spec = parse_spec("\n".join(f"constraint c{k} := {t}" for k, t in enumerate(texts)))
    formulas = [c.formula for c in spec.constraints]
    path = Path(tempfile.mkdtemp()) / "runs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"tool_calls": make_records(events, seed=s)}) + "\n" for s in range(traces)
        )
    )

    def lines() -> list[dict[str, Any]]:
        with path.open() as fh:
            return [json.loads(line) for line in fh]

    def linear() -> object:
        out = []
        for record in lines():
            calls = record["tool_calls"]
            names = [c["tool_name"] for c in calls]
            args = [c["arguments"] for c in calls]
            out.append([linear_holds(f, names, args) for f in formulas])
        return out

    runs: dict[str, Callable[[], object]] = {
        "agentguard verify_traces": lambda: verify_traces(
            [r.trace for r in load_traces(path)],
            spec,  # type: ignore[misc]
        ),
        "agentguard verify_trace loop": lambda: [
            verify_trace(r.trace, spec)
            for r in load_traces(path)  # type: ignore[arg-type]
        ],
        "naive-linear": linear,
    }
    if have_peer:
        import agentltl

        peer = agentltl_constraints(texts)
        runs["agentltl"] = lambda: [agentltl.verify_trace(m, peer) for m in lines()]
    t = medians(runs, repeat)
    # loading alone, in records (calls) per second: agentguard's traces vs bare JSON (and
    # bare orjson, the parser under load_traces), timed among themselves, more rounds
    # (each is a fraction of a second), so the medians hold
    t.update(medians(loading_runs(path), max(repeat, LOADING_REPEAT)))
    total = traces * events
    return {
        "traces": traces,
        "events": events,
        "constraints": 10,
        "events_per_s": {k: total / v for k, v in t.items()},
    }


LOADING_REPEAT = 9
"""The fewest rounds of the loading rows."""


def loading_runs(path: Path) -> dict[str, Callable[[], object]]:
    """The loading rows of a JSON Lines file; each run's result is dropped inside its
    timer (freeing what was built is part of the cost)."""
    import orjson

    def json_lines() -> list[Any]:
        with path.open() as fh:
            return [json.loads(line) for line in fh]

    def orjson_lines() -> list[Any]:
        return [orjson.loads(line) for line in path.read_bytes().splitlines()]

    def parse_floor() -> None:
        # the least any loader that gives Python objects pays: each line parsed by orjson
        # with the cyclic collector paused (as load_traces pauses it), then freed
        gc.disable()
        try:
            values = [orjson.loads(line) for line in path.read_bytes().splitlines()]
            del values
        finally:
            gc.enable()

    return {
        "load_traces (loading only)": lambda: load_traces(path),
        "json.loads per line (loading only)": json_lines,
        "orjson.loads per line (loading only)": orjson_lines,
        PARSE_FLOOR: parse_floor,
    }


PARSE_FLOOR = "parse floor (loading only)"
"""orjson per line with the collector paused, no trace built: no loader of Python
objects goes faster on this file."""


FIRST_ORDER_CONSTRAINTS = 50


def first_order_records(values: int) -> list[dict[str, Any]]:
    """Order ``v`` is looked up, then refunded in lane ``v % 50``: each constraint's
    refunds are 1/50 of the trace, and every order is in every constraint's domain."""
    records = []
    for v in range(values):
        records.append({"tool_name": "lookup", "arguments": {"order": v}})
        records.append(
            {"tool_name": "refund", "arguments": {"order": v, "lane": v % FIRST_ORDER_CONSTRAINTS}}
        )
    return records


def first_order_spec() -> A.Spec:
    """50 distinct constraints sharing their two tools (constraint k reads lane k)."""
    return parse_spec(
        "\n".join(
            f"constraint c{k} := forall o: G(refund(order = o, lane = {k}) -> O lookup(order = o))"
            for k in range(FIRST_ORDER_CONSTRAINTS)
        )
    )


def _plain_scores(trace: Trace, spec: A.Spec) -> list[bool]:
    """The baseline: the same evaluator deciding each quantifier one value at a time."""
    from agentguard.semantics.evaluator import Evaluator

    ev = Evaluator(trace, indexed=False)
    return [ev.holds(c.formula) for c in spec.constraints]


def first_order(values: int, repeat: int, baseline_values: int) -> dict[str, Any]:
    """Events/s of ``verify_trace`` on 50 constraints x ``values`` distinct orders, with
    loading (records -> Trace) and without, every instance holding and one violated;
    the per-value baseline at ``baseline_values`` orders (it is minutes at 10k)."""
    spec = first_order_spec()
    out: dict[str, Any] = {"values": values, "baseline_values": baseline_values}
    for case, drop in (("all hold", 0), ("one violated", 1)):
        records = first_order_records(values)[drop:]
        small = first_order_records(baseline_values)[drop:]
        prebuilt, small_trace = Trace.from_records(records), Trace.from_records(small)
        ours = [c.passed for c in verify_trace(small_trace, spec).constraints]
        if ours != _plain_scores(small_trace, spec):
            raise SystemExit(f"first-order verdicts differ from the per-value baseline ({case})")

        def loaded(records: list[dict[str, Any]] = records) -> object:
            return verify_trace(Trace.from_records(records), spec)

        def scored(trace: Trace = prebuilt) -> object:
            return verify_trace(trace, spec)

        def scored_small(trace: Trace = small_trace) -> object:
            return verify_trace(trace, spec)

        def baseline(trace: Trace = small_trace) -> object:
            return _plain_scores(trace, spec)

        t = medians(
            {
                "agentguard": loaded,
                "agentguard eval-only": scored,
                "agentguard (small)": scored_small,
                "per-value baseline (small)": baseline,
            },
            repeat,
        )
        sizes = {k: len(small) if "small" in k else len(records) for k in t}
        out[case] = {k: sizes[k] / v for k, v in t.items()}
    return out


def _print_row(row: dict[str, Any]) -> None:
    rates = row["events_per_s"]
    print(f"{row['constraints']:>3} constraints, {row['set']:<6} set, {row['events']:>7,} events")
    for k, v in rates.items():
        ours = rates["agentguard eval-only" if "eval-only" in k else "agentguard"]
        ratio = "" if k.startswith("agentguard") else f"  agentguard is {ours / v:,.2f}x"
        print(f"    {k:<24} {v:>12,.0f} ev/s{ratio}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions (median)")
    parser.add_argument(
        "--values", type=int, default=10_000, help="first-order distinct orders (the target's size)"
    )
    parser.add_argument("--full", action="store_true", help="100k-event traces too")
    parser.add_argument("--json", action="store_true", help="print JSON at the end")
    args = parser.parse_args(argv)
    sizes = [1_000, 10_000, 100_000] if args.full else [1_000, 10_000]
    values = args.values
    try:
        import agentltl  # noqa: F401

        have_peer = True
    except ImportError:
        have_peer = False
    print(
        "events per second (ratio = agentguard's rate / the baseline's), medians of "
        f"{args.repeat} interleaved runs"
    )
    rows = long_traces(sizes, args.repeat, have_peer)
    short = many_short(args.repeat, have_peer)
    rates = short["events_per_s"]
    ours = rates["agentguard verify_traces"]
    print(
        "\nmany short traces: 1,000 x 100 events from JSON Lines (loading included), 10 constraints"
    )
    for k, v in rates.items():
        if k == PARSE_FLOOR:
            share = rates["load_traces (loading only)"] / v
            print(f"  {k:<36} {v:>12,.0f} records/s (load_traces runs at {share:.0%} of it)")
        elif "loading only" in k:
            print(f"  {k:<36} {v:>12,.0f} records/s (target >= 1,000,000 for load_traces)")
        else:
            print(f"  {k:<36} {v:>12,.0f} ev/s   verify_traces is {ours / v:,.2f}x")
    fo = first_order(values, args.repeat, min(values, 500))
    print(
        f"\nfirst-order: {FIRST_ORDER_CONSTRAINTS} constraints x {values:,} distinct orders "
        f"({2 * values:,} events); baseline (one evaluation per value) at "
        f"{fo['baseline_values']:,} orders"
    )
    for case in ("all hold", "one violated"):
        case_rates = fo[case]
        print(f"  {case}")
        for k, v in case_rates.items():
            print(f"    {k:<28} {v:>12,.0f} ev/s")
        ratio = case_rates["agentguard (small)"] / case_rates["per-value baseline (small)"]
        print(f"    indexed over per-value baseline, same size: {ratio:,.1f}x")
    if args.json:
        print(json.dumps({"long": rows, "many_short": short, "first_order": fo}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
