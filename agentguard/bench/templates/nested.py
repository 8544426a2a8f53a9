"""Nested-loop and multi-branch templates: nested_loops, tool_condition_branching."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.bench.templates._base import Params, Recorder, Template, schedule

# -- nested_loops: i = 1..N, v = tool_a(i), j = 1..v: tool_b(i, j); add results >= θ ------


def nested_threshold(seed: int) -> int:
    """The threshold θ = seed mod 8 + 14 of nested_loops and nested_loops+branching.

    The paper leaves θ open. With i <= 6 and j <= v <= 7, ``tool_b(i, j) = i·j + 11``
    lies in 12..53, and i = 1, 2 (always run) give 12..21; a θ in 14..21 makes every
    instance have results on both sides of it, so the answer is never 0 and both
    branches of nested_loops+branching fire. (The earlier ``seed mod 50 + 25`` was
    above every reachable result for most seeds.)
    """
    return seed % 8 + 14


def _nested_params(difficulty: int, seed: int) -> Params:
    return {
        "N": schedule((2, 3, 4, 5, 6), difficulty),
        "seed": seed,
        "threshold": nested_threshold(seed),
    }


def _nested_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total = 0
    for i in range(1, p["N"] + 1):
        v = rec.value("tool_a", ("i",), i=i)
        for j in range(1, v + 1):
            r = rec.value("tool_b", ("i",), i=i, j=j)
            if r >= p["threshold"]:
                total += r
    return total


def _nested_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        "Set total = 0.",
        f"For each i from 1 to {p['N']}: call tool_a with i and call its result v; "
        "then do step 3 for this i.",
        "For each j from 1 to v: call tool_b with i and j; call its result r. "
        f"If r >= {p['threshold']}, add r to total; otherwise add nothing.",
        "The answer is total.",
    ]


NESTED_LOOPS = Template(
    name="nested_loops",
    kind="Nested loops",
    description="Outer i = 1..N: tool_a(i) -> v; inner j = 1..v: tool_b(i, j); threshold branch.",
    tools=("tool_a", "tool_b"),
    scaling="N",
    params=_nested_params,
    simulate=_nested_sim,
    procedure=_nested_steps,
    rules=("Finish all inner tool_b calls for one i before calling tool_a for the next i.",),
)

# -- tool_condition_branching: N = tool_iterations(seed); tool_b(i, j) routed by parity ---


def tcb_j(seed: int) -> int:
    """tool_condition_branching's j = 2·(seed mod 5) + 1, an odd number in 1..9.

    C.4's derived ``j = seed mod 10 + 1`` is even for half the seeds, and with an even j
    every ``r = i·j + 11`` is odd, so tool_c would never fire. With an odd j the parity
    of r alternates with i and both routes occur on every instance.
    """
    return 2 * (seed % 5) + 1


def _tcb_params(difficulty: int, seed: int) -> Params:
    return {"d": difficulty, "seed": seed, "j": tcb_j(seed)}


def _tcb_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    n = rec.value("tool_iterations", ("seed",), seed=p["seed"])
    total = 0
    for i in range(1, n + 1):
        r = rec.value("tool_b", ("j",), i=i, j=p["j"])
        if r % 2 == 0:
            total += rec.value("tool_c", (), x=r)
        else:
            total += rec.value("tool_d", (), numbers=[r, i])
    return total


def _tcb_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        f"Set total = 0. Call tool_iterations with seed = {p['seed']}; call its result N.",
        f"For each i from 1 to N: call tool_b with i and j = {p['j']}; call its result r.",
        "If r is even, call tool_c with x = r. If r is odd, call tool_d with "
        "numbers = [r, i]. Add the result of that call to total.",
        "The answer is total.",
    ]


TOOL_CONDITION_BRANCHING = Template(
    name="tool_condition_branching",
    kind="Multi-branch",
    description="tool_iterations(seed) sets N; for i: tool_b; route to tool_c or tool_d.",
    tools=("tool_iterations", "tool_b", "tool_c", "tool_d"),
    scaling="d (passed to tool_iterations)",
    params=_tcb_params,
    simulate=_tcb_sim,
    procedure=_tcb_steps,
    rules=("Each iteration calls exactly one of tool_c or tool_d, chosen by the parity of r.",),
    alternatives=(("tool_c", "tool_d"),),
)
