"""Offline batch scoring vs pm4py's DECLARE conformance, on the same log.

A log of ``--traces`` traces x ``--events`` events over 12 activities is checked against
10 DECLARE constraints (existence, absence, response, precedence, chain-response,
responded-existence), written once as a pm4py DECLARE model and once as AgentLTL:

    existence(a)              F a
    absence(a)                !F a
    response(a, b)            G(a -> F b)
    precedence(a, b)          G(b -> O a)       (b only after some a)
    chain-response(a, b)      G(a -> X b)
    responded-existence(a, b) F a -> F b

The same model is also written in two other spellings (``SPELLINGS``): with the trace
predicates (``Called(a)``, ``!Called(a)``, ``Called(b) -> Before(a, b)``,
``Called(a) -> Called(b)``) and negated (``!G !a``, ``G !a``, ``!Called(a) | Called(b)``,
...); each must take the bulk path like the first (issue 29: ``Called(a) -> Called(b)``
once sent every trace to the per-trace evaluator), and each is timed against pm4py.

Before timing, the per-constraint deviation counts of both tools are compared, for every
spelling, and must be equal (the script exits 1 otherwise). Timed in the same run, interleaved, the same
number of repetitions each, medians reported:

* ``pm4py``: ``pm4py.algo.conformance.declare.variants.classic.apply_list`` on the
  projected log (lists of activity names), the fastest entry pm4py offers;
* ``verify_traces``: agentguard's batch API on the same log as ``Trace`` objects;
* ``verify_trace loop``: ``[verify_trace(t, spec) for t in traces]``, the per-trace API;
* the same three from the JSON Lines file on disk (reading and parsing included):
  pm4py gets ``json.loads`` + projection, agentguard ``load_traces`` (its loader);
* loading alone: ``load_traces`` (Trace objects, tool column coded, calls built on first
  use) and pm4py's ``json.loads`` + projection, in records (calls) per second.

The prebuilt ``Trace`` objects come from ``Trace.from_records``, which reads the tool
names and codes them once; that work is in the from-file and loading rows.

    python benchmarks/declare.py [--traces 1000] [--events 100] [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ACTIVITIES = [f"t{i}" for i in range(12)]

# (pm4py template, activities, AgentLTL formula)
CONSTRAINTS: list[tuple[str, tuple[str, ...], str]] = [
    ("existence", ("t0",), "F t0"),
    ("existence", ("t11",), "F t11"),
    ("absence", ("t10",), "!F t10"),
    ("response", ("t1", "t2"), "G(t1 -> F t2)"),
    ("response", ("t3", "t4"), "G(t3 -> F t4)"),
    ("precedence", ("t5", "t6"), "G(t6 -> O t5)"),
    ("precedence", ("t0", "t7"), "G(t7 -> O t0)"),
    ("chainresponse", ("t8", "t9"), "G(t8 -> X t9)"),
    ("responded_existence", ("t2", "t3"), "F t2 -> F t3"),
    ("responded_existence", ("t11", "t10"), "F t11 -> F t10"),
]


SPELLINGS: dict[str, list[str]] = {
    "ltl": [formula for _, _, formula in CONSTRAINTS],
    "predicates": [
        "Called(t0)",
        "CalledN(t11, 1, >=)",
        "!Called(t10)",
        "G(t1 -> F t2)",
        "G(t3 -> F t4)",
        "Called(t6) -> Before(t5, t6)",
        "Called(t7) -> Before(t0, t7)",
        "G(t8 -> X t9)",
        "Called(t2) -> Called(t3)",
        "Called(t11) -> Called(t10)",
    ],
    "negated": [
        "!G !t0",
        "!CalledN(t11, 0, =)",
        "G !t10",
        "!F(t1 & !F t2)",
        "G(t3 -> F t4)",
        "After(t6, t5) | !Called(t6)",
        "!F(t7 & !O t0)",
        "G(t8 -> X t9)",
        "!Called(t2) | Called(t3)",
        "!(F t11 & !F t10)",
    ],
}
"""The ten constraints of ``CONSTRAINTS`` in three spellings, each equivalent to pm4py's."""


def make_log(traces: int, events: int, seed: int = 0) -> list[list[str]]:
    """Traces with skewed activity frequencies, so every constraint fails on some traces."""
    rng = random.Random(seed)
    weights = [8, 6, 6, 5, 5, 4, 4, 3, 3, 8, 0.02, 0.3]
    log = []
    for _ in range(traces):
        trace = rng.choices(ACTIVITIES, weights=weights, k=events)
        if rng.random() < 0.5:  # half the traces follow t8 by t9 everywhere
            trace = [x for t in trace for x in ((t, "t9") if t == "t8" else (t,))][:events]
        log.append(trace)
    return log


def pm4py_model() -> dict[str, dict[Any, dict[str, int]]]:
    from pm4py.algo.discovery.declare import templates as T

    keys = {
        "existence": T.EXISTENCE,
        "absence": T.ABSENCE,
        "response": T.RESPONSE,
        "precedence": T.PRECEDENCE,
        "chainresponse": T.CHAINRESPONSE,
        "responded_existence": T.RESPONDED_EXISTENCE,
    }
    model: dict[str, dict[Any, dict[str, int]]] = {}
    for template, acts, _ in CONSTRAINTS:
        key = acts[0] if len(acts) == 1 else acts
        model.setdefault(keys[template], {})[key] = {"support": 1, "confidence": 1}
    return model


def spec_text(spelling: str = "ltl") -> str:
    return "\n".join(
        f"constraint {template}_{'_'.join(acts)} := {formula}"
        for (template, acts, _), formula in zip(CONSTRAINTS, SPELLINGS[spelling], strict=True)
    )


def bulk_path(spec: Any, traces: list[Any]) -> list[str]:
    """The constraints of ``spec`` the bulk scorer does not take (scored trace by trace)."""
    from agentguard.scoring.bulk import Bulk

    bulk = Bulk(traces, [t.names for t in traces])
    return [c.name for c in spec.constraints if bulk.score(c) is None]


def median_interleaved(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Median seconds of each run, alternating runs each round so load drift hits all."""
    for fn in runs.values():  # warm-up, untimed
        fn()
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (median)")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.environ.setdefault("PM4PY_SUPPRESS_WELCOME", "1")
        from pm4py.algo.conformance.declare.variants import classic

    from agentguard import Trace, load_traces, parse_spec, verify_trace, verify_traces

    log = make_log(args.traces, args.events)
    model = pm4py_model()
    specs = {k: parse_spec(spec_text(k)) for k in SPELLINGS}
    spec = specs["ltl"]
    traces = [Trace.from_records([{"tool_name": a} for a in t]) for t in log]
    folder = Path(tempfile.mkdtemp())
    path = folder / "log.jsonl"
    path.write_text(
        "".join(json.dumps({"tool_calls": [{"tool_name": a} for a in t]}) + "\n" for t in log)
    )

    # same deviations, constraint by constraint, before anything is timed (every spelling)
    theirs = classic.apply_list(log, model)
    names = [c.name for c in spec.constraints]
    theirs_counts = dict.fromkeys(names, 0)
    for case in theirs:
        for template, acts in case["deviations"]:
            acts = (acts,) if isinstance(acts, str) else tuple(acts)
            theirs_counts[f"{template.replace(' ', '_')}_{'_'.join(acts)}"] += 1
    counts = {}
    for k, sp in specs.items():
        ours = verify_traces(traces, sp)
        counts[k] = {n: sum(not r.constraints[i].passed for r in ours) for i, n in enumerate(names)}
    ours_counts = counts["ltl"]
    same = all(c == theirs_counts for c in counts.values())
    off_path = {k: bulk_path(sp, traces) for k, sp in specs.items()}

    def pm4py_from_file() -> Any:
        with path.open() as fh:
            projected = [[c["tool_name"] for c in json.loads(line)["tool_calls"]] for line in fh]
        return classic.apply_list(projected, model)

    def pm4py_loading() -> Any:
        with path.open() as fh:
            return [[c["tool_name"] for c in json.loads(line)["tool_calls"]] for line in fh]

    def ours_loading() -> Any:
        return load_traces(path)

    def ours_from_file() -> Any:
        loaded = [r.trace for r in load_traces(path)]
        return verify_traces(loaded, spec)

    def loop_from_file() -> Any:
        return [verify_trace(r.trace, spec) for r in load_traces(path)]  # type: ignore[arg-type]

    def spelt(sp: Any, from_file: bool) -> Callable[[], Any]:
        if from_file:
            return lambda: verify_traces([r.trace for r in load_traces(path)], sp)
        return lambda: verify_traces(traces, sp)

    others = {
        f"verify_traces[{k}]{suffix}": spelt(sp, bool(suffix))
        for k, sp in specs.items()
        if k != "ltl"
        for suffix in ("", "_from_file")
    }
    times = median_interleaved(
        {
            "pm4py": lambda: classic.apply_list(log, model),
            "verify_traces": lambda: verify_traces(traces, spec),
            **others,
            "verify_trace_loop": lambda: [verify_trace(t, spec) for t in traces],
            "pm4py_from_file": pm4py_from_file,
            "verify_traces_from_file": ours_from_file,
            "verify_trace_loop_from_file": loop_from_file,
            "pm4py_loading": pm4py_loading,
            "load_traces": ours_loading,
        },
        args.repeat,
    )
    events = args.traces * args.events
    ratios = {
        "verify_traces_speedup_over_pm4py": times["pm4py"] / times["verify_traces"],
        "verify_traces_speedup_over_loop": times["verify_trace_loop"] / times["verify_traces"],
        "from_file_speedup_over_pm4py": times["pm4py_from_file"] / times["verify_traces_from_file"],
        "from_file_speedup_over_loop": times["verify_trace_loop_from_file"]
        / times["verify_traces_from_file"],
        "load_traces_speedup_over_pm4py_loading": times["pm4py_loading"] / times["load_traces"],
        **{
            f"{k}_speedup_over_pm4py{'_from_file' if k.endswith('file') else ''}": times[
                "pm4py_from_file" if k.endswith("file") else "pm4py"
            ]
            / times[k]
            for k in others
        },
    }
    result = {
        "traces": args.traces,
        "events_per_trace": args.events,
        "repeat": args.repeat,
        "same_deviation_counts": same,
        "deviations": ours_counts,
        "off_the_bulk_path": off_path,
        "median_seconds": times,
        "events_per_second": {k: events / v for k, v in times.items()},
        "load_traces_records_per_second": events / times["load_traces"],
        "ratios": ratios,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{args.traces} traces x {args.events} events, 10 DECLARE constraints, "
            f"{args.repeat} interleaved runs each, medians"
        )
        print(
            f"same deviation counts as pm4py, every spelling: {same} "
            f"({sum(ours_counts.values())} deviations)"
        )
        for k, missed in off_path.items():
            print(f"  spelling {k:<11} off the bulk path: {', '.join(missed) or 'none'}")
        for name, seconds in times.items():
            print(f"  {name:<28} {seconds * 1000:9.1f} ms  {events / seconds:>12,.0f} events/s")
        for name, ratio in ratios.items():
            print(f"  {name:<40} {ratio:6.2f}x")
        rate = events / times["load_traces"]
        print(f"  load_traces: {rate:,.0f} records/s (target >= 1,000,000)")
    if not same:
        print(f"deviation counts differ: ours {counts} pm4py {theirs_counts}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
