"""Replay the call sequence of every offline ToolSandbox scenario whose milestones give one.

Run: ``AGENTGUARD_TOOLSANDBOX_PYTHON=/path/to/tsb-venv/bin/python python
benchmarks/toolsandbox_ground_truth.py [--list]``. Prints how many of ToolSandbox's named
scenarios need the network (RapidAPI, out of scope), how many give no complete call
sequence and why, how many of the rest replay executable, each exception with its
depth and reason, and the time taken. ``--list`` also prints the scenarios left out.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from agentguard.pec.errors import ReplayError
from agentguard.pec.toolsandbox_env import (
    ToolSandboxWorker,
    call_sequence_gap,
    ground_truth_episode,
    toolsandbox_oracles,
)


def main(show_left_out: bool) -> None:
    start = time.perf_counter()
    with ToolSandboxWorker() as worker:
        scenarios = worker.scenarios()
        print(
            f"ToolSandbox named scenarios: {len(scenarios)} ({time.perf_counter() - start:.1f} s)"
        )
        oracle_for = toolsandbox_oracles(worker)
        left_out: dict[str, list[str]] = {}
        broken: list[tuple[str, int, int, str]] = []
        replayed = calls = 0
        replay_start = time.perf_counter()
        for name, info in scenarios.items():
            gap = call_sequence_gap(info)
            if gap is not None:
                left_out.setdefault(gap.split(":")[0], []).append(name)
                continue
            try:
                episode = ground_truth_episode(worker, name)
            except ReplayError as exc:
                left_out.setdefault(str(exc).split(": ", 1)[-1], []).append(name)
                continue
            scored = oracle_for(episode).score(episode)
            replayed += 1
            calls += episode.horizon
            if not scored.executable and scored.failure is not None:
                broken.append((name, scored.fed, episode.horizon, scored.failure.reason))
        took = time.perf_counter() - replay_start
    print(f"left out: {sum(map(len, left_out.values()))}")
    for why, names in sorted(left_out.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(names):4d}  {why}")
        if show_left_out:
            for name in names:
                print(f"          {name}")
    print(
        f"replayed: {replayed} scenarios, {calls} calls, {replayed - len(broken)} executable "
        f"({took:.1f} s)"
    )
    by_base = Counter(reason for _, _, _, reason in broken)
    for name, fed, horizon, reason in broken:
        print(f"  {name}: FED {fed} of T {horizon}: {reason}")
    if by_base:
        print(f"distinct reasons: {len(by_base)}")


if __name__ == "__main__":
    main("--list" in sys.argv[1:])
