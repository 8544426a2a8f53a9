"""What `from` costs: per call, against the same spec without `from`, and the provenance
indexes' memory as the run grows.

The workload: a run cycling through a user message, a `read` whose text result shows a
value from a pool of ``--distinct`` values (inside a longer text, as an IBAN in an email),
and `send` calls whose `to` is a pool value or a value never shown. Two specs of the
same shape are monitored on it, in the same process, interleaved:

* ``from``: ``G !send(to not from user | results(read))`` and
  ``G !send(to not from trusted)`` (``trusted read``);
* ``baseline``: the same constraints with ``to = "<a constant>"`` for the ``from`` test.

Per call it times the monitor's ``peek`` of the proposed call (the firewall's check)
plus its ``advance`` (the commit), p50 / p99 over the run, and prints the ratio of the
``from`` spec's to the baseline's. Memory: ``tracemalloc`` growth of the monitor at each
run length (the indexes hold the distinct texts seen, so a run reusing ``--distinct``
values stays flat past the first cycle; a run where every value is new grows with it).

    python benchmarks/provenance.py [--lengths 1000,10000,100000] [--distinct 500]
        [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator

from agentguard.language import parse_spec
from agentguard.monitor import Monitor
from agentguard.trace.model import Call

FROM_SPEC = """
tool read(f: str)
tool send(to: str)
trusted read
constraint known := G !send(to not from user | results(read))
constraint trusted_only := G !send(to not from trusted)
"""
BASELINE_SPEC = """
tool read(f: str)
tool send(to: str)
trusted read
constraint known := G !send(to = "DE00 never")
constraint trusted_only := G !send(to = "DE00 never either")
"""


def workload(length: int, distinct: int) -> Iterator[Call]:
    """``length`` calls: every 50th a user message, then read / send alternating."""
    for i in range(length):
        value = f"DE{(i // 2) % distinct:08d}"
        if i % 50 == 0:
            yield Call.message("user", f"please pay {value} the usual amount")
        elif i % 2:
            yield Call("read", {"f": f"mail-{i % 7}"}, f"Invoice: transfer to {value} by Friday.")
        else:
            to = value if i % 4 else f"XX{i % distinct:08d}"  # a quarter never shown
            yield Call("send", {"to": to})


def run(spec_text: str, length: int, distinct: int) -> tuple[list[int], int]:
    """Per-call nanoseconds of peek + advance (untraced), then, in a second run of the
    same calls under ``tracemalloc``, the monitor's memory growth in bytes."""
    spec = parse_spec(spec_text)
    calls = list(workload(length, distinct))
    proposals = [Call(c.name, c.args, kind=c.kind) for c in calls]
    gc.collect()
    monitor = Monitor(spec)
    times: list[int] = []
    for call, proposed in zip(calls, proposals, strict=True):
        start = time.perf_counter_ns()
        if call.kind == "tool":
            monitor.peek(proposed)
        monitor.advance(call)
        times.append(time.perf_counter_ns() - start)
    del monitor
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    monitor = Monitor(spec)
    for call in calls:
        monitor.advance(call)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return times, grown


def quantile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lengths", default="1000,10000,100000")
    parser.add_argument("--distinct", type=int, default=500, help="distinct values in the pool")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    lengths = [int(n) for n in args.lengths.split(",")]
    rows: dict[str, dict[str, float]] = {}
    for length in lengths:
        samples: dict[str, list[tuple[float, float, int]]] = {"from": [], "baseline": []}
        for _ in range(args.repeat):
            for name, text in (("from", FROM_SPEC), ("baseline", BASELINE_SPEC)):
                times, grown = run(text, length, args.distinct)
                samples[name].append((quantile(times, 0.5), quantile(times, 0.99), grown))
        for name, got in samples.items():
            rows[f"{name}_{length}"] = {
                "p50_us": round(statistics.median(s[0] for s in got), 2),
                "p99_us": round(statistics.median(s[1] for s in got), 2),
                "memory_kib": round(statistics.median(s[2] for s in got) / 1024, 1),
            }
        f, b = rows[f"from_{length}"], rows[f"baseline_{length}"]
        f["p50_over_baseline"] = round(f["p50_us"] / b["p50_us"], 2)
        f["p99_over_baseline"] = round(f["p99_us"] / b["p99_us"], 2)
    # every value new: the indexes grow with the distinct texts (the bound's other side)
    fresh = {}
    for length in lengths[:2]:
        _, grown = run(FROM_SPEC, length, length)
        fresh[f"all_distinct_{length}"] = round(grown / 1024, 1)
    if args.json:
        print(json.dumps({"rows": rows, "all_distinct_memory_kib": fresh}, indent=2))
        return 0
    print(
        f"peek + advance per call (µs, p50 / p99, median of {args.repeat} interleaved runs; "
        f"{args.distinct} distinct values) and monitor memory growth"
    )
    for length in lengths:
        f, b = rows[f"from_{length}"], rows[f"baseline_{length}"]
        print(
            f"  {length:>8,} calls  from {f['p50_us']:7.2f} / {f['p99_us']:7.2f}  "
            f"baseline {b['p50_us']:7.2f} / {b['p99_us']:7.2f}  "
            f"ratio p50 {f['p50_over_baseline']:.2f}x p99 {f['p99_over_baseline']:.2f}x  "
            f"memory from {f['memory_kib']:,.1f} KiB, baseline {b['memory_kib']:,.1f} KiB"
        )
    for name, kib in fresh.items():
        print(f"  every value new, {name.split('_')[-1]:>8} calls: from spec memory {kib:,.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
