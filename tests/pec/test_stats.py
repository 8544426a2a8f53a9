"""Paired task bootstrap and Wilson intervals."""

from __future__ import annotations

import numpy as np
import pytest

from agentguard.pec.episode import Scored
from agentguard.pec.errors import PecError
from agentguard.pec.stats import (
    Interval,
    paired_bootstrap,
    paired_differences,
    resample_weights,
    wilson,
)
from tests.pec.helpers import scored


def groups() -> dict[str, list[Scored]]:
    a = [scored(f"t{i}", 4, 5 if i % 3 else 2, i % 2 == 0) for i in range(30)]
    b = [scored(f"t{i}", 4, 5 if i % 5 else 1, i % 3 == 0) for i in range(30)]
    return {"a": a, "b": b}


def test_wilson_matches_paper() -> None:
    """0/12 gives [0.00, 0.24] and 0/61 gives [0.00, 0.06] as in Table 2."""
    assert str(wilson(0, 12)) == "[0.00,0.24]"
    assert str(wilson(0, 61)) == "[0.00,0.06]"
    iv = wilson(106 * 88 // 100, 106)
    assert iv is not None
    assert iv.low == pytest.approx(0.80, abs=0.01)


def test_wilson_undefined_and_invalid() -> None:
    """n = 0 gives None; s > n is an error."""
    assert wilson(0, 0) is None
    with pytest.raises(PecError):
        wilson(3, 2)


def test_weights_are_bootstrap_draws() -> None:
    """Each resample draws exactly n tasks, and the same seed gives the same weights."""
    w = resample_weights(7, 100, seed=3)
    assert (w.sum(axis=1) == 7).all()
    assert np.array_equal(w, resample_weights(7, 100, seed=3))


def test_bootstrap_reproducible_and_contains_point() -> None:
    """Same seed, same intervals; each interval contains its point estimate."""
    one = paired_bootstrap(groups(), resamples=2000, seed=1)
    two = paired_bootstrap(groups(), resamples=2000, seed=1)
    assert one == two
    ter_a = 20 / 30
    assert one["a"].ter.low <= ter_a <= one["a"].ter.high
    assert one["a"].pec[0].low <= one["a"].pec[0].high


def test_paired_resamples_shared_across_groups() -> None:
    """Two identical groups get identical intervals (they see the same task draws)."""
    g = groups()
    out = paired_bootstrap({"x": g["a"], "y": list(g["a"])}, resamples=500, seed=0)
    assert out["x"] == out["y"]


def test_group_missing_tasks_still_bounded() -> None:
    """A group covering only some tasks gets finite intervals (resamples without its tasks skip)."""
    g = groups()
    out = paired_bootstrap({"a": g["a"], "b": g["b"][:3]}, resamples=500, seed=0)
    assert 0 <= out["b"].ter.low <= out["b"].ter.high <= 1


def test_bootstrap_rejects_empty() -> None:
    """No groups, or an empty group, is a PecError."""
    with pytest.raises(PecError):
        paired_bootstrap({})
    with pytest.raises(PecError):
        paired_bootstrap({"a": []})


def test_paired_differences_of_identical_groups_are_zero() -> None:
    """A group compared with an identical copy has a difference interval of exactly [0, 0]."""
    g = groups()
    out = paired_differences({"x": g["a"], "y": list(g["a"])}, "x", resamples=300)
    assert out["y"].ter == Interval(0.0, 0.0)
    assert "x" not in out


def test_paired_difference_tighter_than_marginals() -> None:
    """Pairing: the difference interval is no wider than the sum of the marginal widths."""
    g = groups()
    marg = paired_bootstrap(g, resamples=2000, seed=4)
    diff = paired_differences(g, "a", resamples=2000, seed=4)["b"]
    width = diff.auc_pec.high - diff.auc_pec.low
    a, b = marg["a"].auc_pec, marg["b"].auc_pec
    assert width <= (a.high - a.low) + (b.high - b.low)


def test_unknown_baseline() -> None:
    """A baseline that is not a group is a PecError naming the groups."""
    with pytest.raises(PecError, match="baseline"):
        paired_differences(groups(), "zzz", resamples=10)
