"""The greedy multi-label stratifier behind the paper's ToolSandbox sample."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from agentguard.pec.toolsandbox_env import ToolSandboxWorker
from agentguard.pec.toolsandbox_sample import stratified_sample

LABELS = st.lists(st.sampled_from("ABCDEF"), min_size=1, max_size=4, unique=True)
POOLS = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=6), LABELS, max_size=30)


@given(POOLS, st.integers(0, 40), st.randoms())
def test_size_subset_and_order_free(pool: dict[str, list[str]], n: int, rnd: random.Random) -> None:
    """min(n, |pool|) distinct names of the pool, the same whatever the pool's order."""
    got = stratified_sample(pool, n)
    assert len(got) == len(set(got)) == min(n, len(pool))
    assert set(got) <= set(pool)
    shuffled = list(pool.items())
    rnd.shuffle(shuffled)
    assert stratified_sample(dict(shuffled), n) == got


def test_paper_sample_tracks_category_shares(toolsandbox_worker: ToolSandboxWorker) -> None:
    """200 of the offline scenarios; every category's share within 0.05 of the pool's."""
    offline = {
        name: info.categories
        for name, info in toolsandbox_worker.scenarios().items()
        if not info.network
    }
    sample = stratified_sample(offline, 200)
    assert len(sample) == 200
    for category in {c for cats in offline.values() for c in cats}:
        pool_share = sum(category in cats for cats in offline.values()) / len(offline)
        sample_share = sum(category in offline[name] for name in sample) / 200
        assert abs(pool_share - sample_share) <= 0.05, category
