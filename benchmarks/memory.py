"""Memory of a long run: RSS growth of the Firewall a user runs, next to the bare monitor.

Each configuration runs in its own fresh interpreter (so one cannot inherit another's
heap), drives ``--calls`` calls of the shared 35-constraint workload of
``benchmarks/online.py`` (propose + record, every call allowed), and samples the
resident set size (``/proc/self/statm``, after a full garbage collection) every
``--every`` calls. Reported: RSS growth over the run and per 1,000 calls.

* ``monitor``: the compiled ``Monitor`` alone, ``step`` per call (what "O(1) memory"
  was measured on);
* ``firewall``: ``Firewall(spec)``, the default configuration (no trace kept: the
  monitor's state and counters only);
* ``firewall+log``: ``Firewall(spec, log_path=...)``, the JSONL decision log on (the
  full history is on disk);
* ``firewall+trace``: ``Firewall(spec, keep_trace=True)``, the opt-in in-memory trace
  and every decision (what guard sessions keep for an agent run's export);
* ``firewall+fo``: ``Firewall(spec)`` on the first-order workload of
  ``benchmarks/online.py`` (50 ``forall`` constraints sharing two tools, calls with
  arguments) over 10,000 distinct ids used again and again: a first-order monitor keeps
  state per value, so its memory grows with the distinct values seen (here until all
  10,000 are), not with the run's length.

The ratio printed is each Firewall configuration's growth over the bare monitor's,
measured in the same run. Target: <= 15 MB growth over 300k calls for the default
Firewall. Children run two at a time (one per core); RSS is per process.

    python benchmarks/memory.py [--calls 300000] [--every 50000] [--full] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONFIGS = ("monitor", "firewall", "firewall+log", "firewall+trace", "firewall+fo")
FO_VALUES = 10_000
"""Distinct ids of the first-order configuration."""


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(config: str, calls: int, every: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import online

    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec
    from agentguard.monitor import Monitor
    from agentguard.trace.model import Call

    spec = parse_spec(online.spec_text(online.shared_constraints()))
    samples: list[tuple[int, float]] = []
    empty: dict[str, Any] = {}
    start = time.perf_counter()
    if config == "monitor":
        monitor = Monitor(spec)
        samples.append((0, rss_mb()))
        for i, name in enumerate(online.calls(calls), start=1):
            monitor.step(Call(name, empty, "ok"))
            if i % every == 0:
                samples.append((i, rss_mb()))
    elif config == "firewall+fo":
        fw = Firewall(parse_spec(first_order_spec()))
        samples.append((0, rss_mb()))
        for i in range(1, calls + 1):
            v = (i // 2) % FO_VALUES
            name, args = ("open", {"id": v}) if i % 2 else ("use", {"id": v, "lane": i % 50})
            if fw.propose(name, args).executes:
                fw.record(name, args, "ok")
            if i % every == 0:
                samples.append((i, rss_mb()))
    else:
        log = Path(tempfile.mkdtemp()) / "log.jsonl" if config == "firewall+log" else None
        fw = Firewall(spec, log_path=log, keep_trace=config == "firewall+trace")
        samples.append((0, rss_mb()))
        for i, name in enumerate(online.calls(calls), start=1):
            if fw.propose(name, empty).executes:
                fw.record(name, empty, "ok")
            if i % every == 0:
                samples.append((i, rss_mb()))
    return {
        "config": config,
        "calls": calls,
        "seconds": round(time.perf_counter() - start, 2),
        "rss_mb": samples,
        "growth_mb": round(samples[-1][1] - samples[0][1], 2),
    }


def first_order_spec() -> str:
    """benchmarks/online.py's shared first-order spec: 50 ``forall`` constraints over
    the same two tools."""
    lines = ["spec fo", "tool open(id: int)", "tool use(id: int, lane: int)"]
    lines += [
        f"constraint fo{k} severity TOLERATE := "
        f"forall o: G(use(id = o, lane = {k}) -> O open(id = o))"
        for k in range(50)
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300_000, help="the target's size")
    parser.add_argument("--every", type=int, default=50_000, help="RSS sample interval")
    parser.add_argument("--full", action="store_true", help="1,000,000 calls")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    calls = max(args.calls, 1_000_000) if args.full else args.calls
    every = min(args.every, calls)
    if args.child:
        print(json.dumps(child(args.child, calls, every)))
        return 0
    command = [sys.executable, __file__, "--calls", str(calls), "--every", str(every)]
    results = {}
    for pair in (CONFIGS[:2], CONFIGS[2:4], CONFIGS[4:]):  # two fresh processes at a time
        procs = {
            c: subprocess.Popen([*command, "--child", c], stdout=subprocess.PIPE, text=True)
            for c in pair
        }
        for config, proc in procs.items():
            out, _ = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"{config} failed (exit {proc.returncode})")
            results[config] = json.loads(out.strip().splitlines()[-1])
            print(f"  {config}: {results[config]['seconds']} s", file=sys.stderr)
    # growth beyond the bare monitor's, in MB (a ratio means nothing when the monitor's is ~0)
    base = results["monitor"]["growth_mb"]
    ratios = {f"{c}_growth_beyond_monitor_mb": results[c]["growth_mb"] - base for c in CONFIGS[1:]}
    target = {
        "firewall_meets_15mb_at_300k": results["firewall"]["growth_mb"] * 300_000 / calls <= 15
    }
    if args.json:
        print(json.dumps({"results": results, "ratios": ratios, **target}, indent=2))
        return 0
    print(
        f"RSS growth over {calls:,} calls (shared 35-constraint workload; firewall+fo: 50 "
        f"first-order constraints over {FO_VALUES:,} ids), fresh process each"
    )
    for config, r in results.items():
        curve = "  ".join(f"{n // 1000}k:{mb:.0f}" for n, mb in r["rss_mb"])
        print(
            f"  {config:<15} +{r['growth_mb']:7.1f} MB  ({1000 * r['growth_mb'] / calls:.3f} MB "
            f"per 1k calls)   RSS MB at {curve}"
        )
    for k, v in ratios.items():
        print(f"  {k:<40} {v:+8.1f} MB")
    print(f"  default Firewall <= 15 MB over 300k calls: {target['firewall_meets_15mb_at_300k']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
