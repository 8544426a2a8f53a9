"""The metric family of Eq. 1-12: worked numbers, laws, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.pec.errors import PecError
from agentguard.pec.labels import FailureLabel
from agentguard.pec.metrics import (
    EpisodeArrays,
    Summary,
    depths,
    eligible,
    pec,
    pec_eligible,
    recovery_rate,
    summarize,
)
from tests.pec.helpers import scored, worked_example


def test_worked_numbers() -> None:
    """TER 0.05, RR 138/190, final success 0.74 and 93.2% recovered successes come out exactly."""
    s = summarize(worked_example())
    assert s.n == 200
    assert s.ter == pytest.approx(0.05)
    assert (s.rr_successes, s.rr_eligible) == (138, 190)
    assert s.rr == pytest.approx(0.7263, abs=5e-5)
    assert s.final_success == pytest.approx(0.74)
    d = s.decomposition
    assert d.recovered / s.final_success == pytest.approx(138 / 148)
    assert round(100 * d.recovered / s.final_success, 1) == 93.2


def test_eq12_decomposition_worked() -> None:
    """q s + (1 - q) r reproduces final success with q=0.05, s=1, r=138/190."""
    d = summarize(worked_example()).decomposition
    assert d.q == pytest.approx(0.05)
    assert d.s == 1.0
    assert d.total == pytest.approx(0.74)


def test_no_tool_episode_counts_as_one_slot() -> None:
    """A T=1 no-tool episode is fully executable at FED 2, failed at FED 1."""
    ok = scored("a", 0, 2, True)
    bad = scored("b", 0, 1, False, label=FailureLabel.PRECONDITION)
    assert ok.episode.horizon == 1
    assert ok.executable
    s = summarize([ok, bad])
    assert s.ter == 0.5
    assert s.auc_pec == 0.5
    assert s.rr_eligible == 1
    assert s.pec == (0.5,)


def test_rr_undefined_when_nothing_failed() -> None:
    """RR is None (not 0) when RR-Eligible is 0, and Eq. 12 still holds."""
    s = summarize([scored("a", 2, 3, True), scored("b", 1, 2, False)])
    assert s.rr is None
    assert s.rr_eligible == 0
    assert s.decomposition.r is None
    assert s.decomposition.total == pytest.approx(s.final_success)


def test_single_episode() -> None:
    """One failed episode: TER 0, AUC (FED-1)/T, PEC drops to 0 at FED."""
    s = summarize([scored("a", 4, 3, True)])
    assert (s.ter, s.auc_pec, s.mean_fed, s.rr) == (0.0, 0.5, 3.0, 1.0)
    assert s.pec == (1.0, 1.0, 0.0, 0.0)
    assert s.decomposition.s is None


def test_empty_input_is_a_clear_error() -> None:
    """No episodes raises PecError naming the problem."""
    with pytest.raises(PecError, match="no episodes"):
        summarize([])


def test_fed_out_of_range_rejected() -> None:
    """FED outside 1..T+1 is refused with the episode index."""
    with pytest.raises(PecError, match="outside"):
        EpisodeArrays.of([5], [3], [True])


def test_label_counts_sum_to_rr_eligible() -> None:
    """Primary labels are exclusive: their counts sum to RR-Eligible."""
    eps = [
        scored("a", 3, 1, True, label=FailureLabel.SCHEMA),
        scored("b", 3, 2, False, label=FailureLabel.STATE),
        scored("c", 3, 4, True),
    ]
    s = summarize(eps)
    assert sum(c for _, c in s.labels) == s.rr_eligible == 2


@st.composite
def arrays(draw: st.DrawFn) -> EpisodeArrays:
    n = draw(st.integers(1, 30))
    horizon = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    fed = [draw(st.integers(1, t + 1)) for t in horizon]
    success = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return EpisodeArrays.of(fed, horizon, success)


@settings(deadline=None)
@given(arrays())
def test_pec_non_increasing(a: EpisodeArrays) -> None:
    """Fixed-cohort PEC(k) never increases with k and starts at or below 1."""
    curve = pec(a, depths(a, 10))
    assert (np.diff(curve) <= 0).all()
    assert curve[0] <= 1


@settings(deadline=None)
@given(arrays())
def test_eq7_identity(a: EpisodeArrays) -> None:
    """PEC(k) = (n_k / N) PEC_elig(k) wherever n_k > 0."""
    ks = depths(a)
    n_k = eligible(a, ks)
    mask = n_k > 0
    assert np.allclose(pec(a, ks)[mask], (n_k / a.n * pec_eligible(a, ks))[mask])


@settings(deadline=None)
@given(arrays())
def test_ter_auc_bounds(a: EpisodeArrays) -> None:
    """0 <= TER <= AUC-PEC <= 1."""
    s = summarize_arrays(a)
    assert 0 <= s.ter <= s.auc_pec + 1e-12
    assert s.auc_pec <= 1


@settings(deadline=None)
@given(arrays())
def test_rr_eligible_identity(a: EpisodeArrays) -> None:
    """RR-Eligible = N (1 - TER) exactly."""
    s = summarize_arrays(a)
    assert s.rr_eligible == round(s.n * (1 - s.ter))
    assert math.isclose(s.rr_eligible, s.n * (1 - s.ter), abs_tol=1e-9)


@settings(deadline=None)
@given(arrays())
def test_eq12(a: EpisodeArrays) -> None:
    """P(Y=1) = q s + (1 - q) r, with undefined terms weighted by zero."""
    s = summarize_arrays(a)
    assert s.decomposition.total == pytest.approx(s.final_success)
    if s.rr is not None:
        assert recovery_rate(a) == s.rr


def summarize_arrays(a: EpisodeArrays) -> Summary:
    """Summarize arrays by turning them back into scored episodes."""
    eps = [
        scored(f"t{i}", int(t), int(f), bool(y))
        for i, (f, t, y) in enumerate(zip(a.fed, a.horizon, a.success, strict=True))
    ]
    return summarize(eps)
