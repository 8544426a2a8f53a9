"""Time instance generation, synthesis and gold-trace scoring over the benchmark grid.

Run: ``python benchmarks/bench_generate.py [--seeds N]``. Prints per-stage timings and
the measured share of constraint weight on the structural layers L3-L5.
"""

from __future__ import annotations

import argparse
import time

import agentguard
from agentguard.bench.generate import generate_instance, instance_constraints
from agentguard.bench.runner import run_benchmark
from agentguard.bench.synthesis import layer_weight_shares
from agentguard.bench.templates import TEMPLATE_NAMES


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20, help="seeds per (template, difficulty)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    instances = [
        generate_instance(t, d, s)
        for t in TEMPLATE_NAMES
        for d in range(1, 6)
        for s in range(args.seeds)
    ]
    t1 = time.perf_counter()
    specs = [agentguard.parse_spec(i.spec_text) for i in instances]
    t2 = time.perf_counter()
    scores = [
        agentguard.verify_trace(i.trace(), s).score for i, s in zip(instances, specs, strict=True)
    ]
    t3 = time.perf_counter()
    shares = [layer_weight_shares(instance_constraints(i)) for i in instances]
    structural = sum(s["L3"] + s["L4"] + s["L5"] for s in shares) / len(shares)
    summary = run_benchmark(instances[: 12 * 5 * 2], "baseline")
    t4 = time.perf_counter()

    n = len(instances)
    print(f"instances            {n}")
    print(f"generate             {1e3 * (t1 - t0) / n:.3f} ms/instance")
    print(f"parse spec           {1e3 * (t2 - t1) / n:.3f} ms/instance")
    print(f"verify gold trace    {1e3 * (t3 - t2) / n:.3f} ms/instance")
    print(f"baseline runs        {1e3 * (t4 - t3) / summary.runs:.3f} ms/run ({summary.runs})")
    print(f"gold scores == 1.0   {sum(s == 1.0 for s in scores)}/{n}")
    print(f"L3-L5 weight share   {structural:.3f}")


if __name__ == "__main__":
    main()
