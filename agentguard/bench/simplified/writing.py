"""How a simplified template is written: in a vocab, with its gold calls recorded.

:class:`VocabRecorder` runs the base tools and records each gold call under the vocab's
shown tool and argument names; :class:`Say` phrases calls in the prompt the same way;
:func:`params_for` gives the narrow parameters; :func:`transform` and :func:`route` (with
their phrasings) are the pieces several templates share: the a/c seed transform and the
``branch(c || b)`` route.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


def transform(rec: VocabRecorder, p: Mapping[str, Any], x: int) -> int:
    if p["variant"] == "c":
        return rec.value("tool_c", ("x",), x=x)
    return rec.value("tool_a", ("i",), i=x)


def say_transform(say: Say, p: Mapping[str, Any], x: str) -> str:
    return say.call("tool_c", x=x) if p["variant"] == "c" else say.call("tool_a", i=x)


def route(rec: VocabRecorder, p: Mapping[str, Any], v: int, *, odd_to_c: bool = True) -> int:
    """branch(c || b): odd values go to tool_c, even ones to tool_b(v, j) (or the reverse)."""
    to_c = (v % 2 == 1) == odd_to_c
    return rec.value("tool_c", (), x=v) if to_c else rec.value("tool_b", ("j",), i=v, j=p["j"])


def say_route(say: Say, p: Mapping[str, Any], v: str, *, odd_to_c: bool = True) -> str:
    c, b = say.call("tool_c", x=v), say.call("tool_b", i=v, j=p["j"])
    first, second = ("odd", "even") if odd_to_c else ("even", "odd")
    return f"if {v} is {first}, {c}; if it is {second}, {b}"


ANSWER_FORMAT = " Reply as ANSWER: <integer>."


__all__ = [
    "ANSWER_FORMAT",
    "Prompt",
    "Say",
    "Sim",
    "VocabRecorder",
    "params_for",
    "route",
    "say_route",
    "say_transform",
    "transform",
]
