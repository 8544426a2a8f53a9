"""The paper's ToolSandbox sample: ``n`` offline scenarios chosen by a deterministic greedy
multi-label stratifier over ToolSandbox's scenario categories.

The Prefix Executability paper evaluates 200 "supported" (offline: no RapidAPI) scenario
templates, "selected by a deterministic greedy multi-label stratifier over scenario
category labels". Its code is not published; this is the standard greedy scheme: each
category's target is its share of the offline pool times ``n``; one scenario at a time,
take the one whose categories cover the most remaining deficit (ties: fewer surplus
categories, then name order). The same pool and ``n`` always give the same sample, so
every model and method can be run on the same task ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence


def stratified_sample(categories: Mapping[str, Sequence[str]], n: int) -> list[str]:
    """``n`` scenario names (all when fewer) whose category counts track the pool's shares."""
    pool = sorted(categories)
    if n >= len(pool):
        return pool
    counts = Counter(c for name in pool for c in set(categories[name]))
    deficit = {c: n * k / len(pool) for c, k in counts.items()}
    chosen: list[str] = []
    left = set(pool)
    while len(chosen) < n:

        def score(name: str) -> tuple[float, int, str]:
            labels = set(categories[name])
            gain = sum(max(deficit[c], 0.0) for c in labels)
            surplus = sum(1 for c in labels if deficit[c] <= 0)
            return (-gain, surplus, name)

        best = min(left, key=score)
        chosen.append(best)
        left.remove(best)
        for c in set(categories[best]):
            deficit[c] -= 1
    return sorted(chosen)


__all__ = ["stratified_sample"]
