"""Does a run's cost stay flat whatever the run does? Memory, cost per call and saved-state
size of the default ``Firewall`` on runs that violate, re-flag and stop (issue 29).

Workloads (each in a fresh interpreter, two at a time, one per core):

* ``<spec>.pass`` / ``<spec>.fail`` for every shipped spec (``specs/*.ltl``): the spec's
  passing (failing) trace in ``specs/traces/`` proposed and recorded over and over
  (``propose``; ``record`` when it executes), past any stop, for ``--calls`` calls;
* ``tolerate``: ``CalledN(t, 3, <=)`` at TOLERATE: every call after the third re-flags it;
* ``baseline``: the shared 35-constraint workload of ``benchmarks/online.py``, every call
  allowed: the run whose memory was already flat, measured in the same run.

For each: RSS growth over the run (``/proc/self/statm`` after a full collection, as
``memory.py`` samples it), the median cost per call (propose + record, µs) over the
calls just before 1,000 and just before the end, their ratio, and the size of
``Firewall.save()`` (JSON bytes) at 1,000 calls and at the end.

Targets: RSS growth <= 15 MB over 300k calls for every workload; cost at the end <= 1.2x
the cost at 1k calls; ``save()`` works by default and its size does not grow with the
run where the spec's monitors are finite-state.

``--lengths`` (``code_qa`` only, one process per length, ``--repeat`` interleaved,
medians) prints the cost per call just before 500, 1k, 2k and 10k calls against the
cost at 500 (the quadratic growth the issue measured).

    python benchmarks/long_runs.py [--calls 300000] [--json]
    python benchmarks/long_runs.py --lengths 500,1000,2000,10000 [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPECS = ("appendix_b_fanout", "code_qa", "filesystem_safety", "refund", "tau2_airline")
WORKLOADS = (
    "baseline",
    "tolerate",
    *(f"{s}.{kind}" for s in SPECS for kind in ("pass", "fail")),
)
WINDOW = 200
"""Calls timed before each measuring point (their median)."""

TOLERATE_SPEC = """spec reflag
tool t()
tool u()
constraint at_most_three severity TOLERATE := CalledN(t, 3, <=)
"""


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def workload(name: str) -> tuple[str, list[tuple[str, dict[str, Any], Any]]]:
    """The spec text and the calls looped over (name, arguments, result)."""
    if name == "tolerate":
        return TOLERATE_SPEC, [("t", {}, "ok"), ("u", {}, "ok")]
    if name == "baseline":
        sys.path.insert(0, str(HERE))
        import online

        text = online.spec_text(online.shared_constraints())
        return text, [(n, {}, "ok") for n in online.calls(5_000)]
    from agentguard import load_traces

    spec, kind = name.split(".")
    text = (ROOT / "specs" / f"{spec}.ltl").read_text()
    trace = load_traces(ROOT / "specs" / "traces" / f"{spec}.{kind}.json")[0].trace
    if trace is None:
        raise SystemExit(f"specs/traces/{spec}.{kind}.json holds no trace")
    calls = [c for c in trace.calls if c.is_tool]  # messages are no proposals
    return text, [(c.name, dict(c.args), c.result if c.has_result else "ok") for c in calls]


def child(name: str, calls: int, marks: list[int]) -> dict[str, Any]:
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    text, loop = workload(name)
    fw = Firewall(parse_spec(text))
    wanted = sorted({m for m in (*marks, calls) if m <= calls})
    costs: dict[int, float] = {}
    sizes: dict[int, int | str] = {}
    rss: dict[int, float] = {0: rss_mb()}
    timed: list[float] = []
    perf = time.perf_counter_ns
    n = len(loop)
    for i in range(1, calls + 1):
        tool, args, result = loop[i % n]
        t0 = perf()
        if fw.propose(tool, args).executes:
            fw.record(tool, args, result)
        t1 = perf()
        if i > wanted[0] - WINDOW:
            timed.append((t1 - t0) / 1000)
        if i == wanted[0]:
            costs[i] = statistics.median(timed)
            timed = []
            try:
                sizes[i] = len(json.dumps(fw.save()))
            except Exception as exc:  # noqa: BLE001 - a build that refuses to save: say which
                sizes[i] = type(exc).__name__
            rss[i] = rss_mb()
            wanted.pop(0)
            if not wanted:
                break
    return {"workload": name, "costs_us": costs, "save_bytes": sizes, "rss_mb": rss}


def run_children(names: list[str], calls: int, marks: list[int]) -> dict[str, Any]:
    command = [sys.executable, __file__, "--calls", str(calls)]
    command += ["--marks", ",".join(map(str, marks))]
    out: dict[str, Any] = {}
    for k in range(0, len(names), 2):
        procs = {
            n: subprocess.Popen([*command, "--child", n], stdout=subprocess.PIPE, text=True)
            for n in names[k : k + 2]
        }
        for n, proc in procs.items():
            text, _ = proc.communicate()
            if proc.returncode != 0:
                print(f"{n} failed (exit {proc.returncode})", file=sys.stderr)
                continue
            out[n] = json.loads(text.strip().splitlines()[-1])
    return out


def lengths_report(lengths: list[int], repeat: int, as_json: bool) -> int:
    per: dict[int, list[float]] = {n: [] for n in lengths}
    for _ in range(repeat):
        for n in lengths:  # one fresh process per length, interleaved
            r = run_children(["code_qa.pass"], n, [n])["code_qa.pass"]
            per[n].append(r["costs_us"][str(n)])
    rows = {n: statistics.median(v) for n, v in per.items()}
    base = rows[lengths[0]]
    if as_json:
        print(json.dumps({str(n): {"us": v, "over_first": v / base} for n, v in rows.items()}))
        return 0
    print(f"specs/code_qa.ltl, its passing trace looped: cost per call (median of {WINDOW})")
    for n, v in rows.items():
        print(f"  before {n:>7,} calls  {v:8.1f} µs   {v / base:5.2f}x the cost at {lengths[0]:,}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300_000)
    parser.add_argument("--marks", default="1000", help=argparse.SUPPRESS)
    parser.add_argument("--only", default="", help="comma-separated workloads")
    parser.add_argument("--lengths", default="", help="code_qa cost at these lengths")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    marks = [int(m) for m in args.marks.split(",")]
    if args.child:
        print(json.dumps(child(args.child, args.calls, marks)))
        return 0
    if args.lengths:
        return lengths_report([int(n) for n in args.lengths.split(",")], args.repeat, args.json)
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    results = run_children(names, args.calls, marks)
    rows = {}
    for n, r in results.items():
        rss = r["rss_mb"]
        growth = rss[str(args.calls)] - rss["0"]
        first, last = r["costs_us"][str(marks[0])], r["costs_us"][str(args.calls)]
        rows[n] = {
            "rss_growth_mb": round(growth, 2),
            "us_at_1k": round(first, 2),
            "us_at_end": round(last, 2),
            "end_over_1k": round(last / first, 3),
            "save_bytes_at_1k": r["save_bytes"][str(marks[0])],
            "save_bytes_at_end": r["save_bytes"][str(args.calls)],
        }
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    scale = 300_000 / args.calls
    print(f"Firewall(spec), default options, {args.calls:,} calls per workload, fresh process")
    print(
        f"  {'workload':<26}{'RSS +MB':>9}{'µs@1k':>9}{'µs@end':>9}{'end/1k':>8}"
        f"{'save@1k':>10}{'save@end':>10}"
    )
    for n, row in rows.items():
        print(
            f"  {n:<26}{row['rss_growth_mb']:>9.1f}{row['us_at_1k']:>9.1f}{row['us_at_end']:>9.1f}"
            f"{row['end_over_1k']:>8.2f}{row['save_bytes_at_1k']!s:>10}"
            f"{row['save_bytes_at_end']!s:>10}"
        )
    worst = max(r["rss_growth_mb"] for r in rows.values()) * scale
    print(f"  worst RSS growth scaled to 300k calls: {worst:.1f} MB (target <= 15)")
    print(
        f"  worst end/1k cost: {max(r['end_over_1k'] for r in rows.values()):.2f} (target <= 1.2)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
