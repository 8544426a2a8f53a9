"""Online cost per tool call: agentguard's firewall vs peers on one shared workload.

What a user pays per call is a *step*: the check before the call runs (``propose``),
then recording its result (``record``), usually with the JSONL decision log on. All are
measured, each tool on the same calls, in the same run:

**Shared workload**, 35 constraints over tools t0..t59, none violated by the calls
(t0..t24 run first, then uniformly random calls over t0..t49):

    10 precedence       G(t{i+25} -> O t{i})              i = 0..9
     5 precedence       G(t{i+30} -> O t{i+10})           i = 0..4
    10 counting         CalledN(t{i+10}, 10**9, <=)       i = 0..9
     5 never-after      G(t{i} -> G !t{i+50})             i = 0..4
     5 exclusive        !(F t{i+20} & F t{i+55})          i = 0..4

expressed in each tool's own language:

* agentguard: the formulas above (severity TOLERATE, so every call runs);
* acel-core: ``must_precede`` / ``cannot_follow_without``, ``at_most_n_times``,
  ``never_after``, ``mutually_exclusive`` (shadow mode) -- all 35;
* agentltl 0.2.1: ``Globally/Implies/Once/Now``, ``CalledNTimes``, ``Not/And/Eventually``
  -- all 35; it re-evaluates the whole trace per check (2.9 s per step at 2,000
  calls), so it is measured at 200 calls, not at ``--length``;
* ltl-harness 0.2.0: ``Precedence``, ``NotSuccession`` and a raw LTLf formula for the
  exclusion -- 25 of 35: counting with a bound of 10**9 is not expressible (its
  ``Absence`` template unrolls ``n`` nested eventualities into a DFA).

**First-order**, 50 constraints ``forall o: G(use(id = o) -> O open(id = o))`` with
``--values`` distinct ids each (10,000 by default: the target's size), in two shapes: all
50 on the same two tools (constraint k reads ``use(id = o, lane = k)``; the target: step
p50 <= 50 µs, p99 <= 500 µs) and each constraint on its own tools (``use_k``/``open_k``, the
best case). The step is ``propose`` + ``record``, half uses of opened ids, half opens of
new ones, over the last ``--fo-window`` steps. No peer expresses quantified constraints
online (agentltl's ``ForAll`` re-evaluates the trace per check; acel and ltl-harness have
none).

**The log's floor**: the step plus only what any durable, hash-chained JSON-lines log
pays per call (two lines of the real log's sizes, each timestamped, SHA-256-chained and
written with one write(2), nothing rendered), so the log row's cost can be read against
the part no rendering path removes.

**Naive re-evaluation**: every constraint re-evaluated on the whole prefix at each step
(agentguard's own vectorised offline evaluator), at the same length.

Every figure is the median over ``--repeat`` interleaved repetitions of the p50 / p99
step latency over the last ``--window`` calls before the trace reaches ``--length``.
Ratios are printed against baselines measured in the same run. The shared-workload rows
(agentguard, acel-core, ltl-harness) run in ``--seeds`` child processes, one
``PYTHONHASHSEED`` each, every row in every process: a step's cost depends on the
iteration order of its sets (acel-core's step moves between ~25 and ~46 µs from one seed
to another), so a single process's ratio would be the luck of its seed. Ratios are taken
within each process; the median over processes is printed, with the range.

    python benchmarks/online.py [--length 10000] [--repeat 3] [--seeds 5] [--full] [--json]
"""

from __future__ import annotations

import argparse
import atexit
import gc
import hashlib
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

TOOLS = [f"t{i}" for i in range(60)]
Step = Callable[[str, dict[str, Any]], None]


# ---------------------------------------------------------------- the shared workload
def shared_constraints() -> list[tuple[str, str]]:
    out = [(f"prec{i}", f"G(t{i + 25} -> O t{i})") for i in range(10)]
    out += [(f"prereq{i}", f"G(t{i + 30} -> O t{i + 10})") for i in range(5)]
    out += [(f"count{i}", f"CalledN(t{i + 10}, 1000000000, <=)") for i in range(10)]
    out += [(f"never{i}", f"G(t{i} -> G !t{i + 50})") for i in range(5)]
    out += [(f"excl{i}", f"!(F t{i + 20} & F t{i + 55})") for i in range(5)]
    return out


def calls(n: int, seed: int = 0) -> Iterator[str]:
    """t0..t24 first (so every precedence is met), then random calls over t0..t49."""
    rng = random.Random(seed)
    for i in range(n):
        yield TOOLS[i] if i < 25 else TOOLS[rng.randrange(50)]


def spec_text(constraints: list[tuple[str, str]]) -> str:
    lines = ["spec bench", *(f"tool {t}()" for t in TOOLS)]
    lines += [f"constraint {n} severity TOLERATE := {f}" for n, f in constraints]
    return "\n".join(lines)


# ---------------------------------------------------------------- steps per tool
def agentguard_step(*, log: bool) -> Step:
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    folder = Path(tempfile.mkdtemp())
    fw = Firewall(
        parse_spec(spec_text(shared_constraints())),
        log_path=folder / "log.jsonl" if log else None,
    )
    propose, record = fw.propose, fw.record

    def step(name: str, args: dict[str, Any]) -> None:
        if propose(name, args).executes:
            record(name, args, "ok")

    return step


def log_floor_step() -> Step:
    """The step plus the least any durable, hash-chained JSON-lines log pays per call,
    with nothing rendered: two lines of the sizes the real log writes here (a decision
    before the call, its result after), each timestamped, hashed into the chain
    (SHA-256) and handed to the OS with one write(2). What the log adds beyond this
    row is its rendering and bookkeeping."""
    base = agentguard_step(log=False)
    sizes = _logged_line_sizes()
    folder = Path(tempfile.mkdtemp())
    fd = os.open(folder / "floor.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    atexit.register(os.close, fd)
    lines = [b"x" * (size - 1) + b"\n" for size in sizes]
    sha, now, write = hashlib.sha256, time.time_ns, os.write

    def step(name: str, args: dict[str, Any]) -> None:
        base(name, args)
        for line in lines:
            now()
            sha(line).hexdigest()
            write(fd, line)

    return step


def _logged_line_sizes() -> tuple[int, int]:
    """The median byte sizes of the real log's decision and result lines on this
    workload (a short logged run)."""
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    path = Path(tempfile.mkdtemp()) / "sizes.jsonl"
    fw = Firewall(parse_spec(spec_text(shared_constraints())), log_path=path)
    for name in calls(200):
        if fw.propose(name, {}).executes:
            fw.record(name, {}, "ok")
    fw.finish()
    sizes: dict[str, list[int]] = {"agentguard.decision": [], "agentguard.result": []}
    for raw in path.read_bytes().splitlines(keepends=True):
        event = json.loads(raw)["event"]
        if event in sizes:
            sizes[event].append(len(raw))
    return (
        int(statistics.median(sizes["agentguard.decision"])),
        int(statistics.median(sizes["agentguard.result"])),
    )


def acel_step() -> Step:
    import acel

    logging.getLogger("acel").setLevel(logging.CRITICAL)
    s = acel.Session(mode="shadow")
    for i in range(10):
        s.add_contract(acel.must_precede(f"t{i}", f"t{i + 25}"))
    for i in range(5):
        s.add_contract(acel.cannot_follow_without(f"t{i + 30}", f"t{i + 10}"))
    for i in range(10):
        s.add_contract(acel.at_most_n_times(f"t{i + 10}", 10**9))
    for i in range(5):
        s.add_contract(acel.never_after(f"t{i + 50}", f"t{i}"))
    for i in range(5):
        s.add_contract(acel.mutually_exclusive(f"t{i + 20}", f"t{i + 55}"))
    precheck, postcheck = s.precheck, s.postcheck

    def step(name: str, args: dict[str, Any]) -> None:
        postcheck(name, precheck(name, args), "ok")

    return step


def agentltl_enforcer() -> Any:
    import agentltl as L

    def now(t: str) -> Any:
        return L.Now(t)

    cs = [
        L.Constraint(f"prec{i}", L.Globally(L.Implies(now(f"t{i + 25}"), L.Once(now(f"t{i}")))))
        for i in range(10)
    ]
    cs += [
        L.Constraint(
            f"prereq{i}", L.Globally(L.Implies(now(f"t{i + 30}"), L.Once(now(f"t{i + 10}"))))
        )
        for i in range(5)
    ]
    cs += [L.Constraint(f"count{i}", L.CalledNTimes(f"t{i + 10}", 10**9, "<=")) for i in range(10)]
    cs += [
        L.Constraint(
            f"never{i}", L.Globally(L.Implies(now(f"t{i}"), L.Globally(L.Not(now(f"t{i + 50}")))))
        )
        for i in range(5)
    ]
    cs += [
        L.Constraint(
            f"excl{i}",
            L.Not(L.And(L.Eventually(now(f"t{i + 20}")), L.Eventually(now(f"t{i + 55}")))),
        )
        for i in range(5)
    ]
    return L.Enforcer(cs, default_severity=L.ConstraintSeverity.TOLERATE)


def ltl_harness_monitor() -> tuple[Any, Any]:
    from ltl_harness.engine.monitor import RunMonitor
    from ltl_harness.engine.rulebook import parse_rulebook

    rules: list[dict[str, Any]] = [
        {"id": f"prec{i}", "template": "Precedence", "params": {"a": f"t{i}", "b": f"t{i + 25}"}}
        for i in range(10)
    ]
    rules += [
        {
            "id": f"prereq{i}",
            "template": "Precedence",
            "params": {"a": f"t{i + 10}", "b": f"t{i + 30}"},
        }
        for i in range(5)
    ]
    rules += [
        {
            "id": f"never{i}",
            "template": "NotSuccession",
            "params": {"a": f"t{i}", "b": f"t{i + 50}"},
        }
        for i in range(5)
    ]
    rules += [{"id": f"excl{i}", "formula": f"!(F(t{i + 20}) & F(t{i + 55}))"} for i in range(5)]
    for r in rules:
        r["posture"] = "tripwire"
    rulebook = parse_rulebook(
        {"name": "bench", "activities": {t: {"tool": t} for t in TOOLS}, "rules": rules}
    )
    return rulebook, RunMonitor


def ltl_harness_step(rulebook: Any, monitor_type: Any) -> Step:
    from ltl_harness.engine.rulebook import candidate_activities, resolve_activity

    monitor = monitor_type(rulebook)

    def step(name: str, args: dict[str, Any]) -> None:  # noqa: ARG001 - names only
        monitor.decide(candidate_activities(rulebook, name))
        activity = resolve_activity(rulebook, name, "ok")
        if activity is not None:
            monitor.advance(activity)

    return step


# ---------------------------------------------------------------- measuring
def percentiles(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.99))]


def run_steps(
    step: Step, length: int, window: int, *, untimed: Step | None = None
) -> tuple[float, float]:
    """p50/p99 (µs) of ``step`` over the last ``window`` calls up to ``length``.

    ``untimed`` (when given) feeds the calls before the window instead of ``step``.
    """
    feed = untimed or step
    clock = time.perf_counter_ns
    samples: list[float] = []
    empty: dict[str, Any] = {}
    gc.disable()
    try:
        for i, name in enumerate(calls(length)):
            if i < length - window:
                feed(name, empty)
                continue
            t0 = clock()
            step(name, empty)
            samples.append((clock() - t0) / 1000)
    finally:
        gc.enable()
    return percentiles(samples)


def check_only_run(length: int, window: int) -> tuple[float, float]:
    """p50/p99 of ``propose`` alone (the record after it is not timed)."""
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    fw = Firewall(parse_spec(spec_text(shared_constraints())))
    clock = time.perf_counter_ns
    samples = []
    gc.disable()
    try:
        for i, name in enumerate(calls(length)):
            t0 = clock()
            d = fw.propose(name, {})
            t1 = clock()
            if d.executes:
                fw.record(name, {}, "ok")
            if i >= length - window:
                samples.append((t1 - t0) / 1000)
    finally:
        gc.enable()
    return percentiles(samples)


def naive_run(length: int, checks: int) -> tuple[float, float]:
    """Re-evaluate every constraint on prefix + proposed call at each step."""
    from agentguard.language import parse_spec
    from agentguard.semantics.evaluator import Evaluator
    from agentguard.trace.model import Call, Trace

    spec = parse_spec(spec_text(shared_constraints()))
    formulas = [c.formula for c in spec.constraints]
    names = list(calls(length))
    prefix = [Call(n) for n in names[: length - checks]]
    samples = []
    for name in names[length - checks :]:
        t0 = time.perf_counter_ns()
        ev = Evaluator(Trace((*prefix, Call(name))))
        for f in formulas:
            ev.holds(f)
        samples.append((time.perf_counter_ns() - t0) / 1000)
        prefix.append(Call(name))
    return percentiles(samples)


def first_order_run(values: int, window: int, *, shared: bool) -> tuple[float, float]:
    """p50/p99 step latency of 50 quantified constraints, ``values`` ids each."""
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    k_count = 50
    if shared:
        tools = ["open(id: int)", "use(id: int, lane: int)"]
        body = "forall o: G(use(id = o, lane = {k}) -> O open(id = o))"
    else:
        tools = [f"open_{k}(id: int)" for k in range(k_count)]
        tools += [f"use_{k}(id: int, lane: int)" for k in range(k_count)]
        body = "forall o: G(use_{k}(id = o, lane = {k}) -> O open_{k}(id = o))"
    lines = ["spec fo", *(f"tool {t}" for t in tools)]
    lines += [f"constraint fo{k} severity TOLERATE := {body.format(k=k)}" for k in range(k_count)]
    fw = Firewall(parse_spec("\n".join(lines)))

    def open_tool(k: int) -> str:
        return "open" if shared else f"open_{k}"

    def use_tool(k: int) -> str:
        return "use" if shared else f"use_{k}"

    # warm-up (untimed): `values` distinct ids opened (per constraint), each proposed then
    # recorded as in the timed steps (a record without its proposal snapshots every
    # constraint it may break, O(values) each: minutes at 10k values)
    for v in range(values):
        for k in range(1 if shared else k_count):
            if fw.propose(open_tool(k), {"id": v}).executes:
                fw.record(open_tool(k), {"id": v}, "ok")
    rng = random.Random(2)
    samples = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for _ in range(window):
            k = rng.randrange(k_count)
            if rng.random() < 0.5:
                name, args = use_tool(k), {"id": rng.randrange(values), "lane": k}
            else:
                name, args = open_tool(k), {"id": values + rng.randrange(values)}
            t0 = clock()
            if fw.propose(name, args).executes:
                fw.record(name, args, "ok")
            samples.append((clock() - t0) / 1000)
    finally:
        gc.enable()
    return percentiles(samples)


def median_pair(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def timed(label: str, fn: Callable[[], Any]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    print(f"  {label}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--length", type=int, default=10_000, help="trace length measured at")
    parser.add_argument("--window", type=int, default=1_000, help="steps measured per run")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions")
    parser.add_argument("--values", type=int, default=10_000, help="first-order ids")
    parser.add_argument("--fo-window", type=int, default=1_000, help="first-order steps measured")
    parser.add_argument("--full", action="store_true", help="length 100k, 5 repetitions")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument(
        "--only", choices=["first-order"], help="run only these rows (no peers, no ratios)"
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=5,
        help="processes (PYTHONHASHSEED 0..N-1) the shared-workload rows run in",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.only == "first-order":
        return _first_order_only(args.values, args.fo_window, args.repeat)
    if args.full:
        args.length, args.repeat = max(args.length, 100_000), max(args.repeat, 5)
    length, window = args.length, min(args.window, args.length - 25)
    # agentltl re-evaluates the whole trace (nested G: quadratically) per check: 2.9 s per
    # step at 2,000 calls, so it is measured at a short trace
    peer_length, peer_window = min(length, 200), 20
    fo_window = args.fo_window

    if args.child:  # one process of the shared-workload rows: medians as JSON
        shared, compile_s = _shared_rows(length, window, args.repeat)
        print(json.dumps({"rows": shared, "compile_s": compile_s}))
        return 0
    # The shared-workload rows run in --seeds processes, one hash seed each: a peer's
    # step cost depends on its sets' iteration order (acel-core's varies 25-46 µs from
    # seed to seed), so one process's figure is luck. Each process interleaves all rows;
    # a ratio is taken within a process, then the median over processes is reported.
    per_seed = [_shared_child(seed, length, window, args.repeat) for seed in range(args.seeds)]
    harness_compile_s = statistics.median(c for _, c in per_seed)
    shared_rows = list(per_seed[0][0])
    res: dict[str, tuple[float, float]] = {
        k: median_pair([tuple(rows[k]) for rows, _ in per_seed])  # type: ignore[misc]
        for k in shared_rows
    }
    spread = {
        k: (min(rows[k][0] for rows, _ in per_seed), max(rows[k][0] for rows, _ in per_seed))
        for k in shared_rows
    }

    configs: dict[str, Callable[[], tuple[float, float]]] = {
        "agentltl_step": lambda: _agentltl_run(peer_length, peer_window),
        "first_order_own_tools": partial(first_order_run, args.values, fo_window, shared=False),
        "first_order_shared_tools": partial(first_order_run, args.values, fo_window, shared=True),
    }
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    for rep in range(args.repeat):
        for name, fn in configs.items():
            runs[name].append(timed(f"{name} #{rep + 1}", fn))
    res.update({k: median_pair(v) for k, v in runs.items()})
    res["naive_reevaluation"] = timed("naive", lambda: naive_run(length, 10))

    def within(top: str, bottom: str) -> list[float]:
        return [rows[top][0] / rows[bottom][0] for rows, _ in per_seed]

    ours = res["agentguard_step"][0]
    seeded = {
        "acel_step_over_agentguard_step": within("acel_step", "agentguard_step"),
        "ltl_harness_step_over_agentguard_step": within("ltl_harness_step", "agentguard_step"),
        "log_adds_to_step": [r - 1 for r in within("agentguard_step_log", "agentguard_step")],
        "log_floor_adds_to_step": [
            r - 1 for r in within("agentguard_step_log_floor", "agentguard_step")
        ],
        "step_over_check": within("agentguard_step", "agentguard_check"),
    }
    ratios = {k: statistics.median(v) for k, v in seeded.items()}
    ratios |= {
        "agentltl_step_over_agentguard_step": res["agentltl_step"][0] / ours,
        "naive_over_agentguard_step": res["naive_reevaluation"][0] / ours,
        "first_order_shared_over_own_tools": res["first_order_shared_tools"][0]
        / res["first_order_own_tools"][0],
    }
    result = {
        "length": length,
        "window": window,
        "repeat": args.repeat,
        "seeds": args.seeds,
        "p50_range_over_seeds_us": {k: [round(a, 2), round(b, 2)] for k, (a, b) in spread.items()},
        "ratio_range_over_seeds": {
            k: [round(min(v), 3), round(max(v), 3)] for k, v in seeded.items()
        },
        "ltl_harness_compile_s": round(harness_compile_s, 2),
        "p50_p99_us": {k: [round(v[0], 2), round(v[1], 2)] for k, v in res.items()},
        "ratios": {k: round(v, 3) for k, v in ratios.items()},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"\nper-call latency at {length:,} calls, µs (p50 / p99), median of {args.repeat} "
        f"interleaved runs (shared-workload rows: median over {args.seeds} processes, one "
        "hash seed each, p50 range over them in brackets)"
    )
    notes = {
        "ltl_harness_step": "25 of 35 constraints (no large counts)",
        "agentltl_step": f"at {peer_length} calls (not {length:,}), last {peer_window}",
        "naive_reevaluation": "last 10 calls only",
        "agentguard_step_log_floor": "step + 2 x (time_ns, SHA-256, write(2)), nothing rendered",
        "first_order_own_tools": f"50 x {args.values:,} ids, {fo_window} steps",
        "first_order_shared_tools": f"50 x {args.values:,} ids, {fo_window} steps",
    }
    for k, (p50, p99) in res.items():
        band = f"[{spread[k][0]:.1f}-{spread[k][1]:.1f}]  " if k in spread else ""
        print(f"  {k:<28} {p50:10.1f} / {p99:10.1f}   {band}{notes.get(k, '')}")
    print(f"  ltl-harness rulebook compile: {harness_compile_s:.1f} s")
    for k, v in ratios.items():
        band = f"   [{min(seeded[k]):.2f}-{max(seeded[k]):.2f} over seeds]" if k in seeded else ""
        print(f"  {k:<40} {v:8.2f}{'' if k.startswith('log_') else 'x'}{band}")
    p50, p99 = res["first_order_shared_tools"]
    met = "met" if p50 <= 50 and p99 <= 500 else "missed"
    print(f"  first-order target (p50 <= 50 µs, p99 <= 500 µs, shared tools): {met}")
    return 0


def _shared_rows(
    length: int, window: int, repeat: int
) -> tuple[dict[str, tuple[float, float]], float]:
    """The shared-workload rows in this process, ``repeat`` interleaved runs, medians;
    and the ltl-harness rulebook's compile time."""
    print("compiling the ltl-harness rulebook (MONA, once)...", file=sys.stderr)
    t0 = time.perf_counter()
    rulebook, monitor_type = ltl_harness_monitor()
    compile_s = time.perf_counter() - t0
    configs: dict[str, Callable[[], tuple[float, float]]] = {
        "agentguard_check": lambda: check_only_run(length, window),
        "agentguard_step": lambda: run_steps(agentguard_step(log=False), length, window),
        "agentguard_step_log": lambda: run_steps(agentguard_step(log=True), length, window),
        "agentguard_step_log_floor": lambda: run_steps(log_floor_step(), length, window),
        "acel_step": lambda: run_steps(acel_step(), length, window),
        "ltl_harness_step": lambda: run_steps(
            ltl_harness_step(rulebook, monitor_type), length, window
        ),
    }
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
    for rep in range(repeat):
        for name, fn in configs.items():
            runs[name].append(timed(f"{name} #{rep + 1}", fn))
    return {k: median_pair(v) for k, v in runs.items()}, round(compile_s, 2)


def _shared_child(
    seed: int, length: int, window: int, repeat: int
) -> tuple[dict[str, list[float]], float]:
    """:func:`_shared_rows` in a child interpreter with ``PYTHONHASHSEED=seed``."""
    import os
    import subprocess

    command = [
        sys.executable,
        __file__,
        "--child",
        f"--length={length}",
        f"--window={window}",
        f"--repeat={repeat}",
    ]
    print(f"  shared-workload rows, hash seed {seed}...", file=sys.stderr)
    done = subprocess.run(
        command,
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["rows"], float(out["compile_s"])


def _first_order_only(values: int, window: int, repeat: int) -> int:
    """The two first-order rows alone, median of ``repeat`` interleaved runs."""
    runs: dict[str, list[tuple[float, float]]] = {"own_tools": [], "shared_tools": []}
    for rep in range(repeat):
        for shape in runs:
            fn = partial(first_order_run, values, window, shared=shape == "shared_tools")
            runs[shape].append(timed(f"first-order, {shape} #{rep + 1}", fn))
    print(f"first-order step, 50 x {values:,} ids, {window} steps, µs (p50 / p99)")
    for shape, found in runs.items():
        p50, p99 = median_pair(found)
        print(f"  first_order_{shape:<22} {p50:10.1f} / {p99:10.1f}")
    return 0


def _agentltl_run(length: int, window: int) -> tuple[float, float]:
    e = agentltl_enforcer()

    def step(name: str, args: dict[str, Any]) -> None:
        e.check(name, args)
        e.record_completed(name, args, result="ok")

    def feed(name: str, args: dict[str, Any]) -> None:
        e.record_completed(name, args, result="ok")

    return run_steps(step, length, window, untimed=feed)


if __name__ == "__main__":
    raise SystemExit(main())
