"""Does the online check stay flat as the run grows? agentguard's check and step at
10,000, 100,000 and 1,000,000 calls, against themselves at 10,000 in the same run.

The shared 35-constraint workload of ``online.py`` (its calls, its spec, its timers): the
check is ``propose`` alone, the step ``propose`` + ``record``, each the p50 / p99 over the
last ``--window`` calls before the run reaches the length. The lengths are measured in
turn, ``--repeat`` times interleaved, medians. The target (issue 15, "keep what is
already ahead"): check p50 <= 10 µs, flat to 1M calls. The JSONL log is left out here
(two lines per call: some 600 MB of log at 1M calls); ``online.py`` has its row.

    python benchmarks/online_length.py [--repeat 3] [--window 1000] [--lengths 10000,...]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from online import agentguard_step, check_only_run, run_steps  # this folder's

LENGTHS = (10_000, 100_000, 1_000_000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions")
    parser.add_argument("--window", type=int, default=1_000, help="calls timed per run")
    parser.add_argument(
        "--lengths",
        default=",".join(map(str, LENGTHS)),
        help="comma-separated run lengths, the first the baseline",
    )
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    lengths = [int(n) for n in args.lengths.split(",")]
    runs: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for length in lengths:
            runs.setdefault(f"check_{length}", []).append(check_only_run(length, args.window))
            step = agentguard_step(log=False)
            runs.setdefault(f"step_{length}", []).append(run_steps(step, length, args.window))
    rows = {
        name: {
            "p50_us": round(statistics.median(p50 for p50, _ in pairs), 2),
            "p99_us": round(statistics.median(p99 for _, p99 in pairs), 2),
        }
        for name, pairs in runs.items()
    }
    for kind in ("check", "step"):
        base = rows[f"{kind}_{lengths[0]}"]["p50_us"]
        for length in lengths:
            row = rows[f"{kind}_{length}"]
            row["p50_over_first"] = round(row["p50_us"] / base, 3)
    longest = rows[f"check_{lengths[-1]}"]
    met = longest["p50_us"] <= 10.0
    if args.json:
        print(json.dumps({"rows": rows, "check_p50_le_10us_at_longest": met}, indent=2))
        return 0
    print(
        f"agentguard per call on the shared workload, p50 / p99 µs over the last "
        f"{args.window} calls, median of {args.repeat} interleaved runs"
    )
    for name, row in rows.items():
        kind, length = name.split("_")
        print(
            f"  {kind:<6} at {int(length):>9,} calls  {row['p50_us']:6.2f} / "
            f"{row['p99_us']:6.2f}   p50 {row['p50_over_first']:.3f}x the p50 at "
            f"{lengths[0]:,} calls"
        )
    verdict = "met" if met else "missed"
    print(f"  check p50 <= 10 µs at {lengths[-1]:,} calls: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
