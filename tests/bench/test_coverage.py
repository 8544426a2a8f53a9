"""Each template's defining behaviour occurs on a healthy share of instances.

The paper leaves some constants open (thresholds, moduli, loop ranges); ours are chosen
so that branches are taken and not taken, some items qualify and some do not, and
answers are non-zero. Shares are measured on the paper grid (D1-D5 x seeds 42, 123) and
over many seeds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import pytest

from agentguard.bench.errors import InstanceTooLongError
from agentguard.bench.generate import PAPER_SEEDS, generate_instance
from agentguard.bench.instance import Instance
from agentguard.bench.templates import TEMPLATE_NAMES

MANY_SEEDS = range(0, 400, 3)


def _counts(inst: Instance) -> Counter[str]:
    return Counter(c.name for c in inst.gold_trace)


def _results(inst: Instance, tool: str) -> list[int]:
    return [int(c.result["result"]) for c in inst.gold_trace if c.name == tool]


def _both(a: str, b: str) -> Callable[[Instance], bool]:
    return lambda inst: _counts(inst)[a] > 0 and _counts(inst)[b] > 0


def _some_qualify_some_not(inst: Instance) -> bool:
    c = _counts(inst)
    return 0 < c["tool_c"] < c["tool_b"]


def _threshold_splits(inst: Instance) -> bool:
    rs = _results(inst, "tool_b")
    theta = inst.params["threshold"]
    return inst.expected_answer > 0 and min(rs) < theta <= max(rs)


def _both_parities(inst: Instance) -> bool:
    vs = _results(inst, "tool_a")
    return any(v % 2 == 0 for v in vs) and any(v % 2 == 1 for v in vs)


def _expands_high_value(inst: Instance) -> bool:
    return inst.expected_answer > 0 and _counts(inst)["tool_expand"] > 1


def _fan_loop_calls_c(inst: Instance) -> bool:
    return _counts(inst)["tool_c"] > 0


BEHAVIOURS: dict[str, tuple[Callable[[Instance], bool], float, float]] = {
    # template: (behaviour, least share on the paper grid, least share over many seeds)
    "loop_termination": (_both_parities, 1.0, 1.0),
    "branch_selection": (_both("tool_b", "tool_c"), 1.0, 0.8),
    "exists_selection": (_some_qualify_some_not, 0.9, 0.75),
    "nested_loops": (_threshold_splits, 1.0, 1.0),
    "tool_condition_branching": (_both("tool_c", "tool_d"), 1.0, 1.0),
    "dynamic_expansion": (_expands_high_value, 0.7, 0.6),
    "forall_exists_combined": (_some_qualify_some_not, 0.9, 0.75),
    "nested_loops+branching": (_both("tool_c", "tool_d"), 1.0, 1.0),
    "fan_out+loop": (_fan_loop_calls_c, 0.8, 0.75),
}


def _share(template: str, seeds: Iterable[int], behaviour: Callable[[Instance], bool]) -> float:
    hits = total = 0
    for difficulty in range(1, 6):
        for seed in seeds:
            try:
                inst = generate_instance(template, difficulty, seed)
            except InstanceTooLongError:
                continue
            total += 1
            hits += behaviour(inst)
    return hits / total


@pytest.mark.parametrize("template", sorted(BEHAVIOURS))
def test_defining_behaviour_share(template: str) -> None:
    """The behaviour holds on the stated share of the paper grid and of 134 seeds x D1-D5."""
    behaviour, on_grid, on_many = BEHAVIOURS[template]
    assert _share(template, PAPER_SEEDS, behaviour) >= on_grid
    assert _share(template, MANY_SEEDS, behaviour) >= on_many


def test_fan_out_fan_in_branches_follow_the_seed_parity() -> None:
    """Odd seeds route items both ways; even seeds' lists are all even (Table 6), so tool_b only."""
    for seed in MANY_SEEDS:
        for difficulty in (1, 3, 5):
            inst = generate_instance("fan_out_fan_in", difficulty, seed)
            c = _counts(inst)
            if seed % 2:
                assert c["tool_b"] > 0 and c["tool_c"] > 0, inst.id
            else:
                assert c["tool_c"] == 0, inst.id


def test_fan_out_loop_takes_both_branches_for_odd_seeds_below_d5() -> None:
    """fan_out+loop: odd seeds at D1-D4 keep some sums and send others through tool_c."""
    for seed in range(1, 400, 6):
        for difficulty in (1, 2, 3, 4):
            inst = generate_instance("fan_out+loop", difficulty, seed)
            items = inst.params["num_items"]
            assert 0 < _counts(inst)["tool_c"] < items, inst.id


def test_paper_grid_keeps_all_120_instances() -> None:
    """Every paper-grid instance stays within the 50-call filter with the chosen constants."""
    for template in TEMPLATE_NAMES:
        for difficulty in range(1, 6):
            for seed in PAPER_SEEDS:
                assert generate_instance(template, difficulty, seed).num_tool_calls_expected <= 50
