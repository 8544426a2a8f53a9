"""Composite templates: dynamic_expansion, forall_exists_combined, nested_loops+branching,
fan_out+loop, loop+expansion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.bench.templates._base import Params, Recorder, Template, derived_j, schedule
from agentguard.bench.templates.fanout import qualifier_modulus
from agentguard.bench.templates.nested import nested_threshold

_VALUE_THRESHOLD = 32
"""dynamic_expansion's high-value threshold (the paper leaves it open).

Lower thresholds expand more nodes: at 25 the answer is non-zero on 70% of instances but
11% of D4-D5 instances exceed the 50-call filter, including two of the paper grid; at 35
only 57% are non-zero. 32 is the lowest value that keeps all 120 paper-grid instances
(under 1% of other seeds are filtered) and gives a non-zero answer on about two thirds
of instances. D1 stays near one half: with ``min(d, 3) = 1`` child per node the answer
is non-zero only when the start node's single child is high-value."""

# -- dynamic_expansion: BFS from the seed node to max_depth over high-value children --------


def _dyn_params(difficulty: int, seed: int) -> Params:
    return {
        "max_depth": schedule((2, 3, 4, 5, 6), difficulty),
        "seed": seed,
        "start": seed % 20 + 1,
        "threshold": _VALUE_THRESHOLD,
    }


def _dyn_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total, frontier, visited = 0, [p["start"]], {p["start"]}
    for _ in range(p["max_depth"]):
        nxt: list[int] = []
        for node in frontier:
            first = node == p["start"]
            children = rec.call("tool_expand", ("node",) if first else (), node=node)["children"]
            for child in children:
                if child in visited:
                    continue
                visited.add(child)
                value = rec.value("tool_value", (), node=child)
                if value >= p["threshold"]:
                    total += value
                    nxt.append(child)
        frontier = nxt
        if not frontier:
            break
    return total


def _dyn_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        f"Set total = 0. The frontier is [{p['start']}] and the visited set is {{{p['start']}}}.",
        f"Repeat at most {p['max_depth']} times (one level per repetition), while the frontier "
        "is not empty: for each node of the frontier, in order, call tool_expand with that "
        "node; for each returned child, in order, skip it if it is already visited, otherwise "
        "mark it visited and call tool_value with it.",
        f"A child whose value is >= {p['threshold']} is high-value: add its value to total and "
        "put it in the next frontier, in the order found. Other children are dropped.",
        "After each level, the next frontier becomes the frontier. The answer is total.",
    ]


DYNAMIC_EXPANSION = Template(
    name="dynamic_expansion",
    kind="Composite",
    description="BFS from seed node up to max_depth: tool_expand then tool_value; accumulate "
    "high-value children.",
    tools=("tool_expand", "tool_value"),
    scaling="max_depth",
    params=_dyn_params,
    simulate=_dyn_sim,
    procedure=_dyn_steps,
    rules=("Never expand or score a node twice; never go deeper than the stated depth.",),
)

# -- forall_exists_combined: tool_b for all; tool_c on qualifiers; tool_d of those -------


def _fe_params(difficulty: int, seed: int) -> Params:
    return {
        "num_items": schedule((3, 4, 5, 6, 7), difficulty),
        "seed": seed,
        "j": derived_j(seed),
        "modulus": qualifier_modulus(seed),
    }


def _fe_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    numbers = rec.call("tool_a_list", ("seed",), seed=p["seed"])["numbers"]
    results: list[tuple[int, int]] = []  # (result, position of its tool_b call)
    with rec.fan_out() as item:
        for n in numbers:
            with item():
                results.append((rec.value("tool_b", ("j",), i=n, j=p["j"]), len(rec.calls) - 1))
    kept = []
    with rec.fan_out() as item:
        for r, position in results:
            if r % p["modulus"] == 0:
                with item(after=position):
                    kept.append(rec.value("tool_c", (), x=r))
    return rec.value("tool_d", (), numbers=kept)


def _fe_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        f"Call tool_a_list with seed = {p['seed']}. It returns a list of numbers "
        f"({p['num_items']} items).",
        f"For each number n of the list (in any order), call tool_b with i = n and "
        f"j = {p['j']}. Keep the results.",
        f"Then, for each kept result r with r mod {p['modulus']} = 0 (a qualifier; in any "
        "order), call tool_c with x = r. Results that do not qualify are not processed further.",
        "Call tool_d with numbers = the tool_c results, placed in the order of their numbers "
        "in the list (an empty list if no result qualified). The answer is its result.",
    ]


FORALL_EXISTS_COMBINED = Template(
    name="forall_exists_combined",
    kind="Composite",
    description="Forall tool_b; conditional tool_c on qualifiers; aggregate tool_d.",
    tools=("tool_a_list", "tool_b", "tool_c", "tool_d"),
    scaling="num_items",
    params=_fe_params,
    simulate=_fe_sim,
    procedure=_fe_steps,
    rules=("Finish all tool_b calls before the first tool_c call.",),
)

# -- nested_loops+branching: inner tool_b result routed to tool_c or tool_d ------------


def _nlb_params(difficulty: int, seed: int) -> Params:
    return {
        "N": schedule((2, 3, 4, 5, 6), difficulty),
        "seed": seed,
        "threshold": nested_threshold(seed),
    }


def _nlb_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total = 0
    for i in range(1, p["N"] + 1):
        v = rec.value("tool_a", ("i",), i=i)
        for j in range(1, v + 1):
            r = rec.value("tool_b", ("i",), i=i, j=j)
            if r >= p["threshold"]:
                total += rec.value("tool_c", (), x=r)
            else:
                total += rec.value("tool_d", (), numbers=[r, j])
    return total


def _nlb_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        "Set total = 0.",
        f"For each i from 1 to {p['N']}: call tool_a with i and call its result v; then do "
        "step 3 for this i.",
        "For each j from 1 to v: call tool_b with i and j; call its result r. "
        f"If r >= {p['threshold']}, call tool_c with x = r; otherwise call tool_d with "
        "numbers = [r, j]. Add the result of that call to total.",
        "The answer is total.",
    ]


NESTED_LOOPS_BRANCHING = Template(
    name="nested_loops+branching",
    kind="Composite",
    description="Nested loops with inner tool_b result routed to tool_c or tool_d.",
    tools=("tool_a", "tool_b", "tool_c", "tool_d"),
    scaling="N",
    params=_nlb_params,
    simulate=_nlb_sim,
    procedure=_nlb_steps,
    rules=("Route every tool_b result before making the next tool_b call.",),
    alternatives=(("tool_c", "tool_d"),),
)

# -- fan_out+loop: r inner tool_b(n, k) calls per item; sum; parity branch; tool_d ------
# k runs 0..r-1 (Table 7 leaves the range open; branch_selection's row writes k = 0..K-1).
# The parity of s = sum((n·k + 11) mod 100) is that of n·sum(k) + 11r: with k = 1..r and
# r = 3 it is always odd, so tool_c would never fire at D3-D4; with k = 0..r-1 and
# r = 2, 3 it follows n, so odd seeds (whose lists alternate parity) take both branches.
# Even seeds' lists are all even (Table 6), and r = 4 makes s always even: those cases
# stay one-sided whatever the range.


def _fol_params(difficulty: int, seed: int) -> Params:
    return {
        "num_items": schedule((3, 4, 5, 6, 7), difficulty),
        "r": schedule((2, 2, 3, 3, 4), difficulty),
        "seed": seed,
    }


def _fol_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    numbers = rec.call("tool_a_list", ("seed",), seed=p["seed"])["numbers"]
    kept = []
    with rec.fan_out() as item:
        for n in numbers:
            with item():
                s = sum(rec.value("tool_b", ("j",), i=n, j=k) for k in range(p["r"]))
                kept.append(rec.value("tool_c", (), x=s) if s % 2 == 0 else s)
    return rec.value("tool_d", (), numbers=kept)


def _fol_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        f"Call tool_a_list with seed = {p['seed']}. It returns a list of numbers "
        f"({p['num_items']} items).",
        "For each number n of the list (the numbers may be processed in any order; finish "
        f"one number before the next): for each k from 0 to {p['r'] - 1}, in increasing order, "
        "call tool_b with i = n and j = k; let s be the sum of these results.",
        "If s is even, call tool_c with x = s right away and keep its result. If s is odd, keep s.",
        "Call tool_d with numbers = the kept values, placed in the order of their numbers in "
        "the list. The answer is its result.",
    ]


FAN_OUT_LOOP = Template(
    name="fan_out+loop",
    kind="Composite",
    description="Per list element, run r inner tool_b(n, k) calls; sum; even/odd branch; "
    "aggregate.",
    tools=("tool_a_list", "tool_b", "tool_c", "tool_d"),
    scaling="num_items, r",
    params=_fol_params,
    simulate=_fol_sim,
    procedure=_fol_steps,
    rules=("Make all inner tool_b calls for an element before moving to the next element.",),
)

# -- loop+expansion: while total < target: v = tool_a(i); score tool_expand(v)'s children --


def _le_params(difficulty: int, seed: int) -> Params:
    return {"target": schedule((10, 25, 50, 100, 200), difficulty), "start": 1, "seed": seed}


def _le_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total, i = 0, p["start"]
    while total < p["target"]:
        v = rec.value("tool_a", ("i",) if i == p["start"] else (), i=i)
        for child in rec.call("tool_expand", (), node=v)["children"]:
            total += rec.value("tool_value", (), node=child)
        i += 1
    return total


def _le_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        f"Set total = 0 and i = {p['start']}.",
        "Call tool_a with i; call its result v. Call tool_expand with node = v.",
        "For each returned child, in order, call tool_value with it and add its result to total.",
        f"If total >= {p['target']}, stop: the answer is total. Otherwise increase i by 1 "
        "and go back to step 2.",
    ]


LOOP_EXPANSION = Template(
    name="loop+expansion",
    kind="Composite",
    description="While total < target: tool_a(i), then expand children via tool_expand/tool_value.",
    tools=("tool_a", "tool_expand", "tool_value"),
    scaling="target",
    params=_le_params,
    simulate=_le_sim,
    procedure=_le_steps,
    rules=("Check the stopping condition only after all children of an expansion are scored.",),
)
