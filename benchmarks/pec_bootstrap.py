"""Time the paired task bootstrap: 4 methods x 200 tasks x 10,000 resamples.

Compares :func:`agentguard.pec.stats.paired_bootstrap` (one matrix product) with a
naive baseline measured in the same run: a Python loop over resamples that
recomputes TER, mean FED, AUC-PEC, final success and PEC@1..4 for every group.
Goal: the vectorised version in <= 1 s.

    python benchmarks/pec_bootstrap.py [--resamples 10000] [--tasks 200] [--methods 4]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from agentguard.pec.episode import Episode, Scored
from agentguard.pec.stats import paired_bootstrap
from agentguard.trace.model import Call


def make_groups(methods: int, tasks: int, seed: int = 0) -> dict[str, list[Scored]]:
    rng = random.Random(seed)
    groups: dict[str, list[Scored]] = {}
    for m in range(methods):
        eps = []
        for t in range(tasks):
            horizon = rng.randint(1, 10)
            fed = horizon + 1 if rng.random() < 0.6 else rng.randint(1, horizon)
            calls = tuple(Call(f"tool{i}") for i in range(horizon))
            episode = Episode(f"task{t}", calls, rng.random() < 0.7, {"method": f"m{m}"})
            eps.append(Scored(episode, fed))
        groups[f"m{m}"] = eps
    return groups


def naive(groups: dict[str, list[Scored]], resamples: int, seed: int) -> dict[str, list[float]]:
    """Per-resample Python loop: draw task ids, recompute each statistic from scratch."""
    tasks = sorted({e.episode.task_id for eps in groups.values() for e in eps})
    by_task = {g: {e.episode.task_id: e for e in eps} for g, eps in groups.items()}
    rng = np.random.default_rng(seed)
    stats: dict[str, list[list[float]]] = {g: [] for g in groups}
    for _ in range(resamples):
        draw = [tasks[i] for i in rng.integers(0, len(tasks), len(tasks))]
        for g, table in by_task.items():
            eps = [table[t] for t in draw]
            n = len(eps)
            row = [
                sum(e.fed == e.episode.horizon + 1 for e in eps) / n,
                sum(e.fed for e in eps) / n,
                sum((e.fed - 1) / e.episode.horizon for e in eps) / n,
                sum(e.episode.success for e in eps) / n,
                *(sum(e.fed > k for e in eps) / n for k in (1, 2, 3, 4)),
            ]
            stats[g].append(row)
    return {
        g: list(np.percentile(np.array(rows), [2.5, 97.5], axis=0).ravel())
        for g, rows in stats.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--methods", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each (median)")
    args = parser.parse_args()
    groups = make_groups(args.methods, args.tasks)

    fast_times, slow_times = [], []
    for _ in range(args.repeat):  # interleaved, the same number of runs each
        start = time.perf_counter()
        paired_bootstrap(groups, resamples=args.resamples, seed=0)
        fast_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        naive(groups, args.resamples, seed=0)
        slow_times.append(time.perf_counter() - start)
    fast, slow = statistics.median(fast_times), statistics.median(slow_times)

    shape = f"{args.methods} methods x {args.tasks} tasks x {args.resamples} resamples"
    print(f"{shape}, median of {args.repeat} interleaved runs each")
    print(
        f"vectorised paired_bootstrap: {fast:.3f} s  goal <= 1 s: {'met' if fast <= 1.0 else 'MISSED'}"
    )
    print(f"naive per-resample loop:     {slow:.3f} s")
    print(f"speed-up (naive / vectorised): {slow / fast:.1f}x")


if __name__ == "__main__":
    main()
