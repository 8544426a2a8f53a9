"""95% intervals as the paper reports them.

* TER, mean FED, AUC-PEC, final success and PEC@k: task-level percentile bootstrap,
  10,000 resamples, **paired**: one resample of task ids is drawn per dataset and
  applied to every group (model x method) of that dataset, so group differences
  are not blurred by independent task draws. Seeded, hence reproducible.
* RR: Wilson score interval on the RR-Eligible denominator (reported as s/n).

The bootstrap is one matrix product: resample weights ``W`` (B x tasks, how often
each task is drawn) times per-task sums ``M`` (tasks x statistics) gives every
resampled numerator and denominator at once.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from agentguard.pec.episode import Scored
from agentguard.pec.errors import PecError

K = TypeVar("K", bound=Hashable)
Z_95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float

    def __str__(self) -> str:
        return f"[{self.low:.2f},{self.high:.2f}]"


def wilson(successes: int, n: int, *, z: float = Z_95) -> Interval | None:
    """Wilson score interval for ``successes / n``; None when ``n = 0`` (RR undefined)."""
    if n < 0 or not 0 <= successes <= n:
        raise PecError(f"Wilson interval needs 0 <= s <= n, got s={successes}, n={n}")
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class GroupIntervals:
    """Bootstrap intervals of one group; ``pec[j]`` belongs to depth ``depths[j]``."""

    ter: Interval
    mean_fed: Interval
    auc_pec: Interval
    final_success: Interval
    depths: tuple[int, ...]
    pec: tuple[Interval, ...]


_SCALARS = 4  # ter, mean_fed, auc_pec, final_success; column 0 of a block is the count


def task_matrix(
    episodes: Sequence[Scored], tasks: Sequence[str], ks: Sequence[int]
) -> npt.NDArray[np.float64]:
    """Per-task sums: count, executable, FED, (FED-1)/T, Y, then 1{FED > k} per depth."""
    index = {t: i for i, t in enumerate(tasks)}
    rows = np.fromiter(
        (index[e.episode.task_id] for e in episodes), dtype=np.int64, count=len(episodes)
    )
    fed = np.array([e.fed for e in episodes], dtype=np.float64)
    horizon = np.array([e.episode.horizon for e in episodes], dtype=np.float64)
    success = np.array([e.episode.success for e in episodes], dtype=np.float64)
    k = np.asarray(ks, dtype=np.float64)
    columns = np.column_stack(
        [
            np.ones_like(fed),
            (fed == horizon + 1).astype(np.float64),
            fed,
            (fed - 1) / horizon,
            success,
            (fed[:, None] > k[None, :]).astype(np.float64),
        ]
    )
    out = np.zeros((len(tasks), columns.shape[1]), dtype=np.float64)
    np.add.at(out, rows, columns)
    return out


def resample_weights(n_tasks: int, resamples: int, seed: int) -> npt.NDArray[np.float64]:
    """``W[b, t]`` = times task ``t`` is drawn in resample ``b`` (n draws with replacement)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_tasks, size=(resamples, n_tasks))
    draws += np.arange(resamples, dtype=draws.dtype)[:, None] * n_tasks
    counts = np.bincount(draws.ravel(), minlength=resamples * n_tasks)
    return counts.reshape(resamples, n_tasks).astype(np.float64)


def resampled_statistics(
    groups: Mapping[K, Sequence[Scored]],
    *,
    depths: Sequence[int] = (1, 2, 3, 4),
    resamples: int = 10_000,
    seed: int = 0,
) -> dict[K, npt.NDArray[np.float64]]:
    """Every group's statistics on every shared resample: B x (4 + len(depths)) per group.

    Columns: TER, mean FED, AUC-PEC, final success, then PEC(k) per depth. NaN where
    a resample drew none of a group's tasks.
    """
    if resamples < 1:
        raise PecError(f"resamples must be >= 1, got {resamples}")
    if not groups or any(len(eps) == 0 for eps in groups.values()):
        raise PecError("bootstrap needs at least one group, each with at least one episode")
    ks = tuple(int(k) for k in depths)
    tasks = sorted({e.episode.task_id for eps in groups.values() for e in eps})
    keys = list(groups)
    blocks = [task_matrix(groups[key], tasks, ks) for key in keys]
    width = blocks[0].shape[1]
    sums = resample_weights(len(tasks), resamples, seed) @ np.hstack(blocks)
    out: dict[K, npt.NDArray[np.float64]] = {}
    for g, key in enumerate(keys):
        block = sums[:, g * width : (g + 1) * width]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[key] = block[:, 1:] / block[:, :1]
    return out


def paired_bootstrap(
    groups: Mapping[K, Sequence[Scored]],
    *,
    depths: Sequence[int] = (1, 2, 3, 4),
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[K, GroupIntervals]:
    """Percentile intervals for every group of ONE dataset, on shared task resamples."""
    _check_confidence(confidence)
    ks = tuple(int(k) for k in depths)
    stats = resampled_statistics(groups, depths=ks, resamples=resamples, seed=seed)
    return {key: percentile_intervals(values, ks, confidence) for key, values in stats.items()}


def paired_differences(
    groups: Mapping[K, Sequence[Scored]],
    baseline: K,
    *,
    depths: Sequence[int] = (1, 2, 3, 4),
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[K, GroupIntervals]:
    """Intervals of ``group - baseline`` for every other group, from the same paired resamples.

    The paper's Table F.3 shape: because both groups see the same task draws, the
    interval of a difference is much tighter than the two marginal intervals suggest.
    """
    _check_confidence(confidence)
    if baseline not in groups:
        raise PecError(f"baseline group {baseline!r} not found; groups: {list(groups)}")
    ks = tuple(int(k) for k in depths)
    stats = resampled_statistics(groups, depths=ks, resamples=resamples, seed=seed)
    base = stats[baseline]
    return {
        key: percentile_intervals(values - base, ks, confidence)
        for key, values in stats.items()
        if key != baseline
    }


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise PecError(f"confidence must be in (0, 1), got {confidence}")


def percentile_intervals(
    values: npt.NDArray[np.float64], ks: tuple[int, ...], confidence: float = 0.95
) -> GroupIntervals:
    """Percentile intervals of :func:`resampled_statistics` columns (or their differences)."""
    lo, hi = _percentiles(values, (1 - confidence) / 2)
    iv = [Interval(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]
    return GroupIntervals(iv[0], iv[1], iv[2], iv[3], ks, tuple(iv[_SCALARS:]))


def _percentiles(
    values: npt.NDArray[np.float64], alpha: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    q = [100 * alpha, 100 * (1 - alpha)]
    if np.isnan(values).any():  # a group missing some tasks can draw none of its own
        with np.errstate(all="ignore"):
            res = np.nanpercentile(values, q, axis=0)
    else:
        res = np.percentile(values, q, axis=0)
    return res[0], res[1]


__all__ = [
    "GroupIntervals",
    "Interval",
    "paired_bootstrap",
    "paired_differences",
    "percentile_intervals",
    "resample_weights",
    "resampled_statistics",
    "task_matrix",
    "wilson",
]
