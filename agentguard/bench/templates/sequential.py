"""Sequential templates: loop_termination and branch_selection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.bench.templates._base import Params, Recorder, Template, derived_j, schedule

# -- loop_termination: while total < target, add tool_a(i) (even: +v, odd: +2v) ---------


def _loop_params(difficulty: int, seed: int) -> Params:
    return {"target": schedule((10, 25, 50, 100, 200), difficulty), "start": 1, "seed": seed}


def _loop_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total, i = 0, p["start"]
    while total < p["target"]:
        v = rec.value("tool_a", ("i",) if i == p["start"] else (), i=i)
        total += v if v % 2 == 0 else 2 * v
        i += 1
    return total


def _loop_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        f"Set total = 0 and i = {p['start']}.",
        "Call tool_a with i. Call its result v.",
        "If v is even, add v to total. If v is odd, add 2 * v to total.",
        f"If total >= {p['target']}, stop: the answer is total. "
        "Otherwise increase i by 1 and go back to step 2.",
    ]


LOOP_TERMINATION = Template(
    name="loop_termination",
    kind="Sequential",
    description="While-loop: accumulate tool_a(i) results (even adds v, odd adds 2v) "
    "until total >= target.",
    tools=("tool_a",),
    scaling="target",
    params=_loop_params,
    simulate=_loop_sim,
    procedure=_loop_steps,
    rules=(
        "Check the stopping condition after every tool_a call; do not call tool_a again "
        "once total has reached the target.",
    ),
)

# -- branch_selection: K decisions; tool_a(seed+k) routes to tool_c if v > θ else tool_b -


def _branch_params(difficulty: int, seed: int) -> Params:
    return {
        "num_decisions": schedule((2, 3, 5, 7, 9), difficulty),
        "seed": seed,
        "threshold": seed % 5 + 2,
        "j": derived_j(seed),
    }


def _branch_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total = 0
    for k in range(p["num_decisions"]):
        v = rec.value("tool_a", ("i",), i=p["seed"] + k)
        if v > p["threshold"]:
            total += rec.value("tool_c", (), x=v)
        else:
            total += rec.value("tool_b", ("j",), i=v, j=p["j"])
    return total


def _branch_steps(p: Mapping[str, Any]) -> list[str]:
    last = p["seed"] + p["num_decisions"] - 1
    return [
        "Set total = 0.",
        f"For each i from {p['seed']} to {last} in increasing order "
        f"({p['num_decisions']} decisions), do steps 3 to 4.",
        "Call tool_a with i. Call its result v.",
        f"If v > {p['threshold']}, call tool_c with x = v. Otherwise call tool_b with "
        f"i = v and j = {p['j']}. Add the result of that call to total.",
        "The answer is total.",
    ]


BRANCH_SELECTION = Template(
    name="branch_selection",
    kind="Sequential",
    description="For k = 0..K-1: call tool_a; route to tool_c if v > θ else tool_b.",
    tools=("tool_a", "tool_b", "tool_c"),
    scaling="num_decisions",
    params=_branch_params,
    simulate=_branch_sim,
    procedure=_branch_steps,
    rules=("Each decision calls exactly one of tool_b or tool_c, never both.",),
    alternatives=(("tool_b", "tool_c"),),
)
