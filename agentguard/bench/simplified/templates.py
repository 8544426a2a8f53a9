"""The 17 simplified-mode templates (AgentLTL Table 12 plus the two held-out patterns).

Simplified mode uses the four-tool pool {tool_a, tool_b, tool_c, tool_d}, 3-7 calls,
short inline prompts, sequential ``tool_a(seed + i)`` fan-out instead of
``tool_a_list``, and narrow parameters. Four templates (marked a/c in Table 12) admit a
transform variant: the seed transform is ``tool_a`` (variant ``"a"``) or ``tool_c``
(variant ``"c"``). Every template writes its prompt and gold trace in a
:class:`~agentguard.bench.simplified.vocab.Vocab`, so the diverse-tool split only
changes names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentguard.bench.instance import GoldCall
from agentguard.bench.simplified.vocab import Vocab
from agentguard.bench.tools import Toolbox


class VocabRecorder:
    """Runs base tools; records calls under the vocab's shown names and argument names."""

    __slots__ = ("calls", "toolbox", "vocab")

    def __init__(self, toolbox: Toolbox, vocab: Vocab) -> None:
        self.toolbox = toolbox
        self.vocab = vocab
        self.calls: list[GoldCall] = []

    def value(self, base: str, prompt_keys: Sequence[str] = (), **args: Any) -> int:
        result = self.toolbox.call(base, args)
        shown = {self.vocab.a(base, k): v for k, v in args.items()}
        keys = tuple(self.vocab.a(base, k) for k in prompt_keys)
        self.calls.append(GoldCall(self.vocab.t(base), shown, dict(result), keys))
        out: int = result["result"]
        return out


class Say:
    """Phrases calls in the vocab: ``say.call("tool_b", i="v", j=3)`` -> "call X with …"."""

    __slots__ = ("vocab",)

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab

    def call(self, base: str, **args: Any) -> str:
        parts = [f"{self.vocab.a(base, k)} = {v}" for k, v in args.items()]
        return f"call {self.vocab.t(base)} with {' and '.join(parts)}"

    def t(self, base: str) -> str:
        return self.vocab.t(base)


Sim = Callable[[VocabRecorder, Mapping[str, Any]], int]
Prompt = Callable[[Say, Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class SimplifiedTemplate:
    """One simplified pattern; ``transform`` is True for the a/c templates."""

    name: str
    structure: str
    tools: tuple[str, ...]
    simulate: Sim
    prompt: Prompt
    transform: bool = False
    held_out: bool = False
    alternatives: tuple[tuple[str, str], ...] = (("tool_b", "tool_c"),)


def params_for(seed: int, variant: str) -> dict[str, Any]:
    """Narrow parameters: a small base input, ``j``, and a threshold (targets <= 50)."""
    return {
        "seed": seed,
        "s": seed % 40 + 1,
        "j": seed % 10 + 1,
        "threshold": seed % 30 + 20,
        "k": 2 + seed % 2,
        "K": 2 + seed % 2,
        "target": seed % 26 + 13,
        "variant": variant,
    }


def _transform(rec: VocabRecorder, p: Mapping[str, Any], x: int) -> int:
    if p["variant"] == "c":
        return rec.value("tool_c", ("x",), x=x)
    return rec.value("tool_a", ("i",), i=x)


def _say_transform(say: Say, p: Mapping[str, Any], x: str) -> str:
    return say.call("tool_c", x=x) if p["variant"] == "c" else say.call("tool_a", i=x)


def _route(rec: VocabRecorder, p: Mapping[str, Any], v: int, *, odd_to_c: bool = True) -> int:
    """branch(c || b): odd values go to tool_c, even ones to tool_b(v, j) (or the reverse)."""
    to_c = (v % 2 == 1) == odd_to_c
    return rec.value("tool_c", (), x=v) if to_c else rec.value("tool_b", ("j",), i=v, j=p["j"])


def _say_route(say: Say, p: Mapping[str, Any], v: str, *, odd_to_c: bool = True) -> str:
    c, b = say.call("tool_c", x=v), say.call("tool_b", i=v, j=p["j"])
    first, second = ("odd", "even") if odd_to_c else ("even", "odd")
    return f"if {v} is {first}, {c}; if it is {second}, {b}"


ANSWER_FORMAT = " Reply as ANSWER: <integer>."

# -- the 15 training templates --------------------------------------------------------


def _bridge(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    return rec.value("tool_c", (), x=_route(rec, p, v))


def _bridge_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"First {say.call('tool_a', i=p['s'])} to get v. Then {_say_route(say, p, 'v')}; "
        f"call that result r. Finally {say.call('tool_c', x='r')}. The answer is its result."
    )


def _chain(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    r = rec.value("tool_b", ("j",), i=v, j=p["j"])
    y = (
        rec.value("tool_c", (), x=r)
        if r > p["threshold"]
        else rec.value("tool_b", ("j",), i=r, j=p["j"])
    )
    return rec.value("tool_c", (), x=y)


def _chain_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v, then {say.call('tool_b', i='v', j=p['j'])}"
        f" to get r. If r > {p['threshold']}, {say.call('tool_c', x='r')}; otherwise "
        f"{say.call('tool_b', i='r', j=p['j'])}. Call that result y and finally "
        f"{say.call('tool_c', x='y')}. The answer is its result."
    )


def _rebranch(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    w = rec.value("tool_c", (), x=v)
    y = _route(rec, p, w, odd_to_c=False)
    return rec.value("tool_b", ("j",), i=y, j=1)


def _rebranch_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v, then {say.call('tool_c', x='v')} to get w."
        f" Then {_say_route(say, p, 'w', odd_to_c=False)}; call that result y. Finally "
        f"{say.call('tool_b', i='y', j=1)}. The answer is its result."
    )


def _join(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    left = rec.value("tool_b", ("j",), i=v, j=p["j"])
    right = rec.value("tool_c", (), x=v)
    joined = rec.value("tool_b", (), i=left, j=right)
    return _route(rec, p, joined, odd_to_c=False)


def _join_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. {say.call('tool_b', i='v', j=p['j'])} to "
        f"get L, and {say.call('tool_c', x='v')} to get R. Join them: "
        f"{say.call('tool_b', i='L', j='R')} to get z. Then "
        f"{_say_route(say, p, 'z', odd_to_c=False)}. The answer is that result."
    )


def _dual(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    left = _route(rec, p, v)
    right = rec.value("tool_c", (), x=v + 1) if v > 3 else rec.value("tool_b", (), i=v, j=2)
    return rec.value("tool_b", (), i=left, j=right)


def _dual_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. Left branch: {_say_route(say, p, 'v')}; "
        f"call it L. Right branch: if v > 3, {say.call('tool_c', x='v + 1')}; otherwise "
        f"{say.call('tool_b', i='v', j=2)}; call it R. "
        f"Merge: {say.call('tool_b', i='L', j='R')}."
        " The answer is its result."
    )


def _loop2(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    r1 = rec.value("tool_b", ("j",), i=v, j=1)
    r2 = rec.value("tool_b", ("j",), i=v, j=2)
    agg = rec.value("tool_b", (), i=r1, j=r2)
    return _route(rec, p, agg)


def _loop2_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. For j = 1 and j = 2, "
        f"{say.call('tool_b', i='v', j='j')} (results r1, r2). Aggregate: "
        f"{say.call('tool_b', i='r1', j='r2')} to get z. Then {_say_route(say, p, 'z')}. "
        "The answer is that result."
    )


def _verify(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    y = _route(rec, p, v)
    w = rec.value("tool_b", ("j",), i=y, j=1)
    return (
        rec.value("tool_c", (), x=w)
        if w > p["threshold"]
        else rec.value("tool_b", ("j",), i=w, j=p["j"])
    )


def _verify_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v. Then {_say_route(say, p, 'v')}; call it y."
        f" Verify: {say.call('tool_b', i='y', j=1)} to get w. If w > {p['threshold']}, "
        f"{say.call('tool_c', x='w')}; otherwise {say.call('tool_b', i='w', j=p['j'])}. "
        "The answer is that result."
    )


def _six(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = rec.value("tool_a", ("i",), i=p["s"])
    r = rec.value("tool_b", ("j",), i=v, j=p["j"])
    y = _route(rec, p, r)
    w = rec.value("tool_b", ("j",), i=y, j=1)
    z = _route(rec, p, w, odd_to_c=False)
    return rec.value("tool_c", (), x=z)


def _six_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{say.call('tool_a', i=p['s'])} to get v; {say.call('tool_b', i='v', j=p['j'])} to "
        f"get r. Then {_say_route(say, p, 'r')}; call it y. {say.call('tool_b', i='y', j=1)} "
        f"to get w. Then {_say_route(say, p, 'w', odd_to_c=False)}; call it z. Finally "
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


def _fan(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    results = [_route(rec, p, n) for n in _items(rec, p)]
    return rec.value("tool_d", (), numbers=results)


def _fan_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{_say_items(say, p)} For each item n, in order, {_say_route(say, p, 'n')}. "
        f"Then {say.call('tool_d', numbers='[the results, in order]')}. The answer is its "
        "result."
    )


def _forall(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    results = [rec.value("tool_b", ("j",), i=n, j=p["j"]) for n in _items(rec, p)]
    return rec.value("tool_d", (), numbers=results)


def _forall_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{_say_items(say, p)} For each item n, {say.call('tool_b', i='n', j=p['j'])}. Then "
        f"{say.call('tool_d', numbers='[the results, in order]')}. The answer is its result."
    )


def _exists(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    kept = []
    for n in [rec.value("tool_a", ("i",), i=p["s"] + k) for k in range(2)]:
        w = rec.value("tool_b", ("j",), i=n, j=p["j"])
        kept.append(rec.value("tool_c", (), x=w) if w % 3 == 0 else w)
    return rec.value("tool_d", (), numbers=kept)


def _exists_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For i = {p['s']} and i = {p['s'] + 1}, {say.call('tool_a', i='i')} to get n. For "
        f"each n, {say.call('tool_b', i='n', j=p['j'])} to get w; if w mod 3 = 0, also "
        f"{say.call('tool_c', x='w')} and keep its result, otherwise keep w. Then "
        f"{say.call('tool_d', numbers='[the kept values]')}. The answer is its result."
    )


def _grid(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    seeds = [_transform(rec, p, p["s"]), _transform(rec, p, p["s"] + 1)]
    results = [rec.value("tool_b", ("j",), i=v, j=j) for v in seeds for j in (1, 2)]
    return rec.value("tool_d", (), numbers=results)


def _grid_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For x = {p['s']} and x = {p['s'] + 1}, {_say_transform(say, p, 'x')} to get v. For "
        f"each v, in order, and for j = 1 then 2, {say.call('tool_b', i='v', j='j')}. Then "
        f"{say.call('tool_d', numbers='[all four results, in order]')}. The answer is its "
        "result."
    )


def _filter(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    seeds = [_transform(rec, p, p["s"]), _transform(rec, p, p["s"] + 1)]
    results = [rec.value("tool_b", ("j",), i=v, j=p["j"]) for v in seeds]
    kept = [rec.value("tool_c", (), x=r) for r in results if r > p["threshold"]]
    return rec.value("tool_d", (), numbers=kept)


def _filter_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For x = {p['s']} and x = {p['s'] + 1}, {_say_transform(say, p, 'x')} to get v, "
        f"then {say.call('tool_b', i='v', j=p['j'])} to get r. For each r > "
        f"{p['threshold']}, {say.call('tool_c', x='r')}. Then "
        f"{say.call('tool_d', numbers='[those results, possibly empty]')}. The answer is its "
        "result."
    )


def _fan_transform(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    seeds = [_transform(rec, p, p["s"]), _transform(rec, p, p["s"] + 1)]
    routed = [_route(rec, p, v) for v in seeds]
    results = [rec.value("tool_b", (), i=y, j=1) for y in routed]
    return rec.value("tool_d", (), numbers=results)


def _fan_transform_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"For x = {p['s']} and x = {p['s'] + 1}, {_say_transform(say, p, 'x')} to get the "
        f"items. For each item v, {_say_route(say, p, 'v')}; then for each routed result y, "
        f"{say.call('tool_b', i='y', j=1)}. Then "
        f"{say.call('tool_d', numbers='[those results, in order]')}. The answer is its result."
    )


def _reprocess(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    v = _transform(rec, p, p["s"])
    y = _route(rec, p, v)
    w = rec.value("tool_b", (), i=y, j=1)
    z = _route(rec, p, w, odd_to_c=False)
    return rec.value("tool_d", (), numbers=[y, z])


def _reprocess_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"{_say_transform(say, p, p['s'])} to get v. Then {_say_route(say, p, 'v')}; call it y."
        f" {say.call('tool_b', i='y', j=1)} to get w. Then "
        f"{_say_route(say, p, 'w', odd_to_c=False)}; call it z. Finally "
        f"{say.call('tool_d', numbers='[y, z]')}. The answer is its result."
    )


# -- the two held-out patterns ---------------------------------------------------------


def _loop(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    total, i = 0, 1
    while total < p["target"]:
        v = rec.value("tool_a", ("i",) if i == 1 else (), i=i)
        total += v if v % 2 == 0 else 2 * v
        i += 1
    return total


def _loop_p(say: Say, p: Mapping[str, Any]) -> str:
    return (
        f"Start with total = 0 and i = 1. Repeatedly {say.call('tool_a', i='i')} to get v; "
        f"add v to total if v is even, or 2 * v if v is odd; then add 1 to i. Stop as soon "
        f"as total >= {p['target']}. The answer is total."
    )


def _select(rec: VocabRecorder, p: Mapping[str, Any]) -> int:
    total = 0
    for k in range(p["K"]):
        v = rec.value("tool_a", ("i",), i=p["s"] + k)
        total += (
            rec.value("tool_c", (), x=v) if v > 4 else rec.value("tool_b", ("j",), i=v, j=p["j"])
        )
    return total


def _select_p(say: Say, p: Mapping[str, Any]) -> str:
    last = p["s"] + p["K"] - 1
    return (
        f"Start with total = 0. For each i from {p['s']} to {last}, "
        f"{say.call('tool_a', i='i')} to get v; if v > 4, {say.call('tool_c', x='v')}, "
        f"otherwise {say.call('tool_b', i='v', j=p['j'])}; add that result to total. "
        "The answer is total."
    )


_ABC = ("tool_a", "tool_b", "tool_c")
_ABCD = ("tool_a", "tool_b", "tool_c", "tool_d")

SIMPLIFIED_TEMPLATES: Mapping[str, SimplifiedTemplate] = {
    t.name: t
    for t in (
        SimplifiedTemplate(
            "three_call_branch_bridge", "a -> branch(b | c) -> c", _ABC, _bridge, _bridge_p
        ),
        SimplifiedTemplate(
            "chain_then_branch", "a -> b -> branch(c | b) -> c", _ABC, _chain, _chain_p
        ),
        SimplifiedTemplate(
            "rebranch_after_c", "a -> c -> branch(b | c) -> b", _ABC, _rebranch, _rebranch_p
        ),
        SimplifiedTemplate(
            "join_then_branch",
            "a; b and c from a; join with b; branch(c | b)",
            _ABC,
            _join,
            _join_p,
        ),
        SimplifiedTemplate(
            "dual_branch_merge", "a; left and right branches; merge with b", _ABC, _dual, _dual_p
        ),
        SimplifiedTemplate(
            "loop2_then_branch", "a -> b(i,1), b(i,2) -> b -> branch(c | b)", _ABC, _loop2, _loop2_p
        ),
        SimplifiedTemplate(
            "branch_verify_finalize",
            "a -> branch(c | b) -> b -> branch(c | b)",
            _ABC,
            _verify,
            _verify_p,
        ),
        SimplifiedTemplate(
            "six_call_double_rebranch",
            "a -> b -> branch(c | b) -> b -> branch(c | b) -> c",
            _ABC,
            _six,
            _six_p,
        ),
        SimplifiedTemplate(
            "fan_out_fan_in", "k x a -> per-item branch(c | b) -> d", _ABCD, _fan, _fan_p
        ),
        SimplifiedTemplate(
            "forall_processing",
            "k x a -> per-item b -> d",
            ("tool_a", "tool_b", "tool_d"),
            _forall,
            _forall_p,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "exists_selection",
            "2 x a -> per-item b -> c on qualifiers -> d",
            _ABCD,
            _exists,
            _exists_p,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "nested_loops_fixed_2x2",
            "2 transforms -> 2x2 b grid -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            _grid,
            _grid_p,
            transform=True,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "filter_then_process",
            "2 transforms -> 2 b -> c on qualifiers -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            _filter,
            _filter_p,
            transform=True,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "fanout_then_transform",
            "2 transforms -> per-item branch(c | b) -> per-item b -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            _fan_transform,
            _fan_transform_p,
            transform=True,
        ),
        SimplifiedTemplate(
            "branch_then_reprocess",
            "transform -> branch(c | b) -> b -> branch(c | b) -> d",
            ("tool_a", "tool_c", "tool_b", "tool_d"),
            _reprocess,
            _reprocess_p,
            transform=True,
        ),
        SimplifiedTemplate(
            "loop_termination",
            "while total < target: a(i)",
            ("tool_a",),
            _loop,
            _loop_p,
            held_out=True,
            alternatives=(),
        ),
        SimplifiedTemplate(
            "branch_selection", "K x (a -> branch(c | b))", _ABC, _select, _select_p, held_out=True
        ),
    )
}
"""All 17 simplified templates: 15 for training, then the 2 held-out patterns."""

TRAINING_TEMPLATES: tuple[str, ...] = tuple(
    n for n, t in SIMPLIFIED_TEMPLATES.items() if not t.held_out
)
HELD_OUT_TEMPLATES: tuple[str, ...] = tuple(
    n for n, t in SIMPLIFIED_TEMPLATES.items() if t.held_out
)
