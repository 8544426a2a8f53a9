"""The 17 simplified patterns, each a pair: its gold run (``*_gold``, which calls the tools
through a :class:`~agentguard.bench.simplified.writing.VocabRecorder` and returns the answer)
and its prompt (``*_prompt``, phrased by a :class:`~agentguard.bench.simplified.writing.Say`).
:mod:`.templates` names them and says which tools and variants each uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.bench.simplified.writing import (
    Say,
    VocabRecorder,
    route,
    say_route,
    say_transform,
    transform,
)

# -- the 15 training templates --------------------------------------------------------


def bridge_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    return rec.value("tool_c", (), x=route(rec, p, v))


def bridge_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"First {say.call('tool_a', i=p['s'])} to get v. Then {say_route(say, p, 'v')}; "
        f"call that result r. Finally {say.call('tool_c', x='r')}. The answer is its result."
    )


def chain_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    r = rec.value("tool_b", ("j",), i=v, j=p["j"])
    y = (
        rec.value("tool_c", (), x=r)
        if r > p["threshold"]
        else rec.value("tool_b", ("j",), i=r, j=p["j"])
    )
    return rec.value("tool_c", (), x=y)


def chain_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v, then {say.call('tool_b', i='v', j=p['j'])}"
        f" to get r. If r > {p['threshold']}, {say.call('tool_c', x='r')}; otherwise "
        f"{say.call('tool_b', i='r', j=p['j'])}. Call that result y and finally "
        f"{say.call('tool_c', x='y')}. The answer is its result."
    )


def rebranch_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    w = rec.value("tool_c", (), x=v)
    y = route(rec, p, w, odd_to_c=False)
    return rec.value("tool_b", ("j",), i=y, j=1)


def rebranch_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v, then {say.call('tool_c', x='v')} to get w."
        f" Then {say_route(say, p, 'w', odd_to_c=False)}; call that result y. Finally "
        f"{say.call('tool_b', i='y', j=1)}. The answer is its result."
    )


def join_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    left = rec.value("tool_b", ("j",), i=v, j=p["j"])
    right = rec.value("tool_c", (), x=v)
    joined = rec.value("tool_b", (), i=left, j=right)
    return route(rec, p, joined, odd_to_c=False)


def join_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. {say.call('tool_b', i='v', j=p['j'])} to "
        f"get L, and {say.call('tool_c', x='v')} to get R. Join them: "
        f"{say.call('tool_b', i='L', j='R')} to get z. Then "
        f"{say_route(say, p, 'z', odd_to_c=False)}. The answer is that result."
    )


def dual_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    left = route(rec, p, v)
    right = rec.value("tool_c", (), x=v + 1) if v > 3 else rec.value("tool_b", (), i=v, j=2)
    return rec.value("tool_b", (), i=left, j=right)


def dual_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. Left branch: {say_route(say, p, 'v')}; "
        f"call it L. Right branch: if v > 3, {say.call('tool_c', x='v + 1')}; otherwise "
        f"{say.call('tool_b', i='v', j=2)}; call it R. "
        f"Merge: {say.call('tool_b', i='L', j='R')}."
        " The answer is its result."
    )


def loop2_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    r1 = rec.value("tool_b", ("j",), i=v, j=1)
    r2 = rec.value("tool_b", ("j",), i=v, j=2)
    agg = rec.value("tool_b", (), i=r1, j=r2)
    return route(rec, p, agg)


def loop2_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. For j = 1 and j = 2, "
        f"{say.call('tool_b', i='v', j='j')} (results r1, r2). Aggregate: "
        f"{say.call('tool_b', i='r1', j='r2')} to get z. Then {say_route(say, p, 'z')}. "
        "The answer is that result."
    )


def verify_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    y = route(rec, p, v)
    w = rec.value("tool_b", ("j",), i=y, j=1)
    return (
        rec.value("tool_c", (), x=w)
        if w > p["threshold"]
        else rec.value("tool_b", ("j",), i=w, j=p["j"])
    )


def verify_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. Then {say_route(say, p, 'v')}; call it y."
        f" Verify: {say.call('tool_b', i='y', j=1)} to get w. If w > {p['threshold']}, "
        f"{say.call('tool_c', x='w')}; otherwise {say.call('tool_b', i='w', j=p['j'])}. "
        "The answer is that result."
    )


def six_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    r = rec.value("tool_b", ("j",), i=v, j=p["j"])
    y = route(rec, p, r)
    w = rec.value("tool_b", ("j",), i=y, j=1)
    z = route(rec, p, w, odd_to_c=False)
    return rec.value("tool_c", (), x=z)


def six_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v; {say.call('tool_b', i='v', j=p['j'])} to "
        f"get r. Then {say_route(say, p, 'r')}; call it y. {say.call('tool_b', i='y', j=1)} "
        f"to get w. Then {say_route(say, p, 'w', odd_to_c=False)}; call it z. Finally "
        f"{say.call('tool_c', x='z')}. The answer is its result."
    )


def _items(rec: VocabRecorder, p: Mapping[str, Any]) -> list[int]:
    return [rec.value("tool_a", ("i",), i=p["s"] + k) for k in range(p["k"])]


def _say_items(say: Say, p: Mapping[str, Any]) -> str:
    last = p["s"] + p["k"] - 1
    return (
        f"For each i from {p['s']} to {last}, {say.call('tool_a', i='i')}; "
        f"these {p['k']} results are the items."
    )


def fan_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    results = [route(rec, p, n) for n in _items(rec, p)]
    return rec.value("tool_d", (), numbers=results)


def fan_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{_say_items(say, p)} For each item n, in order, {say_route(say, p, 'n')}. "
        f"Then {say.call('tool_d', numbers='[the results, in order]')}. The answer is its "
        "result."
    )


def forall_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    results = [rec.value("tool_b", ("j",), i=n, j=p["j"]) for n in _items(rec, p)]
    return rec.value("tool_d", (), numbers=results)


def forall_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{_say_items(say, p)} For each item n, {say.call('tool_b', i='n', j=p['j'])}. Then "
        f"{say.call('tool_d', numbers='[the results, in order]')}. The answer is its result."
    )


def exists_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    kept = []
    for n in [rec.value("tool_a", ("i",), i=p["s"] + k) for k in range(2)]:
        w = rec.value("tool_b", ("j",), i=n, j=p["j"])
        kept.append(rec.value("tool_c", (), x=w) if w % 3 == 0 else w)
    return rec.value("tool_d", (), numbers=kept)


def exists_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For i = {p['s']} and i = {p['s'] + 1}, {say.call('tool_a', i='i')} to get n. For "
        f"each n, {say.call('tool_b', i='n', j=p['j'])} to get w; if w mod 3 = 0, also "
        f"{say.call('tool_c', x='w')} and keep its result, otherwise keep w. Then "
        f"{say.call('tool_d', numbers='[the kept values]')}. The answer is its result."
    )


def grid_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    seeds = [transform(rec, p, p["s"]), transform(rec, p, p["s"] + 1)]
    results = [rec.value("tool_b", ("j",), i=v, j=j) for v in seeds for j in (1, 2)]
    return rec.value("tool_d", (), numbers=results)


def grid_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For x = {p['s']} and x = {p['s'] + 1}, {say_transform(say, p, 'x')} to get v. For "
        f"each v, in order, and for j = 1 then 2, {say.call('tool_b', i='v', j='j')}. Then "
        f"{say.call('tool_d', numbers='[all four results, in order]')}. The answer is its "
        "result."
    )


def filter_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    seeds = [transform(rec, p, p["s"]), transform(rec, p, p["s"] + 1)]
    results = [rec.value("tool_b", ("j",), i=v, j=p["j"]) for v in seeds]
    kept = [rec.value("tool_c", (), x=r) for r in results if r > p["threshold"]]
    return rec.value("tool_d", (), numbers=kept)


def filter_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For x = {p['s']} and x = {p['s'] + 1}, {say_transform(say, p, 'x')} to get v, "
        f"then {say.call('tool_b', i='v', j=p['j'])} to get r. For each r > "
        f"{p['threshold']}, {say.call('tool_c', x='r')}. Then "
        f"{say.call('tool_d', numbers='[those results, possibly empty]')}. The answer is its "
        "result."
    )


def fan_transform_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    seeds = [transform(rec, p, p["s"]), transform(rec, p, p["s"] + 1)]
    routed = [route(rec, p, v) for v in seeds]
    results = [rec.value("tool_b", (), i=y, j=1) for y in routed]
    return rec.value("tool_d", (), numbers=results)


def fan_transform_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For x = {p['s']} and x = {p['s'] + 1}, {say_transform(say, p, 'x')} to get the "
        f"items. For each item v, {say_route(say, p, 'v')}; then for each routed result y, "
        f"{say.call('tool_b', i='y', j=1)}. Then "
        f"{say.call('tool_d', numbers='[those results, in order]')}. The answer is its result."
    )


def reprocess_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = transform(rec, p, p["s"])
    y = route(rec, p, v)
    w = rec.value("tool_b", (), i=y, j=1)
    z = route(rec, p, w, odd_to_c=False)
    return rec.value("tool_d", (), numbers=[y, z])


def reprocess_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say_transform(say, p, p['s'])} to get v. Then {say_route(say, p, 'v')}; call it y."
        f" {say.call('tool_b', i='y', j=1)} to get w. Then "
        f"{say_route(say, p, 'w', odd_to_c=False)}; call it z. Finally "
        f"{say.call('tool_d', numbers='[y, z]')}. The answer is its result."
    )


# -- the two held-out patterns ---------------------------------------------------------


def loop_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    total, i = 0, 1
    while total < p["target"]:
        v = rec.value("tool_a", ("i",) if i == 1 else (), i=i)
        total += v if v % 2 == 0 else 2 * v
        i += 1
    return total


def loop_prompt(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"Start with total = 0 and i = 1. Repeatedly {say.call('tool_a', i='i')} to get v; "
        f"add v to total if v is even, or 2 * v if v is odd; then add 1 to i. Stop as soon "
        f"as total >= {p['target']}. The answer is total."
    )


def select_gold(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    total = 0
    for k in range(p["K"]):
        v = rec.value("tool_a", ("i",), i=p["s"] + k)
        total += (
            rec.value("tool_c", (), x=v) if v > 4 else rec.value("tool_b", ("j",), i=v, j=p["j"])
        )
    return total


def select_prompt(say: Say, p: Mapping[str, Any]) -> str:
    last = p["s"] + p["K"] - 1
    return (
        f"Start with total = 0. For each i from {p['s']} to {last}, "
        f"{say.call('tool_a', i='i')} to get v; if v > 4, {say.call('tool_c', x='v')}, "
        f"otherwise {say.call('tool_b', i='v', j=p['j'])}; add that result to total. "
        "The answer is total."
    )
