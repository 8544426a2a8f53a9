"""The prefix-executability metrics of Eq. 1-12, vectorised over episodes.

Every function takes the per-episode arrays ``fed`` (FED_i), ``horizon`` (T_i) and,
where needed, ``success`` (Y_i); :func:`episode_arrays` builds them from scored
episodes and :func:`summarize` computes the whole family at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentguard.pec.episode import Scored
from agentguard.pec.errors import PecError
from agentguard.pec.labels import LABEL_ORDER, FailureLabel

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class EpisodeArrays:
    """FED_i, T_i and Y_i of N >= 1 episodes, validated (``1 <= FED_i <= T_i + 1``)."""

    fed: IntArray
    horizon: IntArray
    success: BoolArray

    @classmethod
    def of(
        cls,
        fed: Sequence[int] | npt.ArrayLike,
        horizon: Sequence[int] | npt.ArrayLike,
        success: Sequence[bool] | npt.ArrayLike,
    ) -> EpisodeArrays:
        f = np.asarray(fed, dtype=np.int64).reshape(-1)
        t = np.asarray(horizon, dtype=np.int64).reshape(-1)
        y = np.asarray(success, dtype=bool).reshape(-1)
        if f.size == 0:
            raise PecError("no episodes to score: the metrics need at least one episode (N >= 1)")
        if not f.size == t.size == y.size:
            raise PecError(
                f"array lengths differ: fed {f.size}, horizon {t.size}, success {y.size}"
            )
        if (t < 1).any():
            raise PecError("every horizon T_i must be >= 1 (a no-tool episode has T = 1)")
        if ((f < 1) | (f > t + 1)).any():
            bad = int(np.argmax((f < 1) | (f > t + 1)))
            raise PecError(f"episode {bad}: FED {f[bad]} outside 1..T+1 = 1..{t[bad] + 1}")
        return cls(f, t, y)

    @property
    def n(self) -> int:
        return int(self.fed.size)

    @property
    def failed(self) -> BoolArray:
        """``FED_i <= T_i``: the episode has a non-executable prefix."""
        return self.fed <= self.horizon


def episode_arrays(episodes: Sequence[Scored]) -> EpisodeArrays:
    """The arrays of a list of scored episodes (raises :class:`PecError` when it is empty)."""
    return EpisodeArrays.of(
        [e.fed for e in episodes],
        [e.episode.horizon for e in episodes],
        [e.episode.success for e in episodes],
    )


def depths(arrays: EpisodeArrays, max_depth: int | None = None) -> IntArray:
    """``k = 1..K`` with ``K = max T_i`` unless given."""
    k_max = int(arrays.horizon.max()) if max_depth is None else max_depth
    return np.arange(1, k_max + 1, dtype=np.int64)


def pec(arrays: EpisodeArrays, ks: IntArray) -> FloatArray:
    """Fixed-cohort PEC(k) = (1/N) Σ 1{FED_i > k} (Eq. 4); non-increasing in k."""
    alive = arrays.fed[:, None] > ks[None, :]
    out: FloatArray = alive.mean(axis=0, dtype=np.float64)
    return out


def eligible(arrays: EpisodeArrays, ks: IntArray) -> IntArray:
    """n_k = Σ 1{T_i >= k} (Eq. 5)."""
    out: IntArray = (arrays.horizon[:, None] >= ks[None, :]).sum(axis=0, dtype=np.int64)
    return out


def pec_eligible(arrays: EpisodeArrays, ks: IntArray) -> FloatArray:
    """PEC_elig(k) = (1/n_k) Σ 1{T_i >= k, FED_i > k} (Eq. 6); NaN where n_k = 0."""
    reach = arrays.horizon[:, None] >= ks[None, :]
    alive = reach & (arrays.fed[:, None] > ks[None, :])
    n_k = reach.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_k > 0, alive.sum(axis=0) / np.maximum(n_k, 1), np.nan)


def ter(arrays: EpisodeArrays) -> float:
    """TER = (1/N) Σ 1{FED_i = T_i + 1} (Eq. 8)."""
    return float(np.mean(arrays.fed == arrays.horizon + 1))


def auc_pec(arrays: EpisodeArrays) -> float:
    """AUC-PEC = (1/N) Σ (FED_i - 1) / T_i (Eq. 11)."""
    return float(np.mean((arrays.fed - 1) / arrays.horizon))


def mean_fed(arrays: EpisodeArrays) -> float:
    return float(np.mean(arrays.fed))


def final_success(arrays: EpisodeArrays) -> float:
    return float(np.mean(arrays.success))


def rr_counts(arrays: EpisodeArrays) -> tuple[int, int]:
    """``(s, n)``: successes among failed episodes and RR-Eligible = Σ 1{FED_i <= T_i}."""
    failed = arrays.failed
    return int(np.sum(arrays.success & failed)), int(np.sum(failed))


def recovery_rate(arrays: EpisodeArrays) -> float | None:
    """RR (Eq. 9), or None when no episode failed (RR-Eligible = 0)."""
    s, n = rr_counts(arrays)
    return s / n if n else None


@dataclass(frozen=True, slots=True)
class Decomposition:
    """Eq. 12: ``P(Y=1) = q s + (1 - q) r``, q = TER, s = P(Y=1 | executable), r = RR.

    ``s`` is None when no episode is fully executable, ``r`` when none failed; the
    term they multiply is then zero and :attr:`total` still equals final success.
    """

    q: float
    s: float | None
    r: float | None

    @property
    def uninterrupted(self) -> float:
        """``q s``: share of episodes that succeeded without any failed prefix."""
        return 0.0 if self.s is None else self.q * self.s

    @property
    def recovered(self) -> float:
        """``(1 - q) r``: share of episodes that succeeded after a failed prefix."""
        return 0.0 if self.r is None else (1.0 - self.q) * self.r

    @property
    def total(self) -> float:
        return self.uninterrupted + self.recovered


def decomposition(arrays: EpisodeArrays) -> Decomposition:
    full = ~arrays.failed
    n_full = int(full.sum())
    s = float(arrays.success[full].mean()) if n_full else None
    return Decomposition(ter(arrays), s, recovery_rate(arrays))


@dataclass(frozen=True, slots=True)
class Summary:
    """The whole metric family of one group of episodes (point estimates)."""

    n: int
    ter: float
    mean_fed: float
    auc_pec: float
    rr: float | None
    rr_successes: int
    rr_eligible: int
    final_success: float
    depths: tuple[int, ...]
    pec: tuple[float, ...]
    n_k: tuple[int, ...]
    pec_eligible: tuple[float | None, ...]
    decomposition: Decomposition
    labels: tuple[tuple[FailureLabel, int], ...]
    unlabelled: int
    mean_horizon: float

    def pec_at(self, k: int) -> float:
        """PEC(k) for any k >= 1 (0 beyond the longest episode)."""
        if k < 1:
            raise PecError(f"PEC(k) is defined for k >= 1, got {k}")
        return self.pec[k - 1] if k <= len(self.pec) else 0.0


def summarize(episodes: Sequence[Scored], *, max_depth: int | None = None) -> Summary:
    """Every metric of one group of scored episodes."""
    arrays = episode_arrays(episodes)
    ks = depths(arrays, max_depth)
    s, n = rr_counts(arrays)
    counts = dict.fromkeys(LABEL_ORDER, 0)
    unlabelled = 0
    for e in episodes:
        if e.failure is not None:
            counts[e.failure.label] += 1
        elif not e.executable:
            unlabelled += 1
    elig = pec_eligible(arrays, ks)
    return Summary(
        n=arrays.n,
        ter=ter(arrays),
        mean_fed=mean_fed(arrays),
        auc_pec=auc_pec(arrays),
        rr=s / n if n else None,
        rr_successes=s,
        rr_eligible=n,
        final_success=final_success(arrays),
        depths=tuple(int(k) for k in ks),
        pec=tuple(float(v) for v in pec(arrays, ks)),
        n_k=tuple(int(v) for v in eligible(arrays, ks)),
        pec_eligible=tuple(None if np.isnan(v) else float(v) for v in elig),
        decomposition=decomposition(arrays),
        labels=tuple(counts.items()),
        unlabelled=unlabelled,
        mean_horizon=float(arrays.horizon.mean()),
    )


__all__ = [
    "Decomposition",
    "EpisodeArrays",
    "Summary",
    "auc_pec",
    "decomposition",
    "depths",
    "eligible",
    "episode_arrays",
    "final_success",
    "mean_fed",
    "pec",
    "pec_eligible",
    "recovery_rate",
    "rr_counts",
    "summarize",
    "ter",
]
