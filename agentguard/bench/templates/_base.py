"""What a template is, and the recorder that runs a procedure on the real tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from agentguard.bench.instance import GoldCall
from agentguard.bench.tools import TOOL_INFOS, Toolbox, ToolResult


class Recorder:
    """Runs tools for a template's simulation and keeps the gold trace with its structure.

    Each recorded call remembers the calls the procedure puts directly before it
    (``GoldCall.after``). Calls are a chain by default; :meth:`fan_out` marks a map over
    a set, whose items may come in any order: each item's calls follow the call before
    the block, and the call after the block follows every item.
    """

    __slots__ = ("_after", "_blocks", "_item", "calls", "toolbox")

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        self.calls: list[GoldCall] = []
        self._after: tuple[int, ...] = ()
        self._item: tuple[int, int] | None = None
        self._blocks = 0

    def call(self, name: str, prompt_keys: Sequence[str] = (), **args: Any) -> ToolResult:
        result = self.toolbox.call(name, args)
        index = len(self.calls)
        self.calls.append(
            GoldCall(name, dict(args), dict(result), tuple(prompt_keys), self._after, self._item)
        )
        self._after = (index,)
        return result

    def value(self, name: str, prompt_keys: Sequence[str] = (), **args: Any) -> int:
        """Call a scalar tool and return its ``result`` integer."""
        out: int = self.call(name, prompt_keys, **args)["result"]
        return out

    @contextmanager
    def fan_out(self) -> Iterator[Callable[..., AbstractContextManager[None]]]:
        """A map over a set: ``with rec.fan_out() as item:`` then ``with item():`` per item.

        ``item(after=k)`` makes that item follow gold call ``k`` instead of the call
        before the block (an item that only depends on one earlier result).
        """
        block, entry, tails = self._blocks, self._after, set[int]()
        self._blocks += 1
        counter = iter(range(1 << 30))

        @contextmanager
        def item(after: int | None = None) -> Iterator[None]:
            self._after = entry if after is None else (after,)
            self._item = (block, next(counter))
            start = len(self.calls)
            try:
                yield
            finally:
                if len(self.calls) > start:
                    tails.update(self._after)
                self._item = None

        try:
            yield item
        finally:
            self._after = tuple(sorted(tails)) or entry


Params = dict[str, Any]
Simulate = Callable[[Recorder, Mapping[str, Any]], int]
Procedure = Callable[[Mapping[str, Any]], Sequence[str]]


@dataclass(frozen=True, slots=True)
class Template:
    """A named procedural pattern (Table 7) with its difficulty schedule (Table 9).

    ``params(difficulty, seed)`` gives the parameter dict; ``simulate`` runs the
    procedure on the tools and returns the answer; ``procedure`` gives the numbered
    steps of the prompt with every number inlined; ``alternatives`` names the
    mutually exclusive branch tools (for L1's forbidden branches).
    """

    name: str
    kind: str
    description: str
    tools: tuple[str, ...]
    scaling: str
    params: Callable[[int, int], Params]
    simulate: Simulate
    procedure: Procedure
    rules: tuple[str, ...] = ()
    alternatives: tuple[tuple[str, str], ...] = ()


def derived_j(seed: int) -> int:
    """The derived parameter ``j = (seed mod 10) + 1`` of Appendix C.4."""
    return seed % 10 + 1


def schedule(values: Sequence[Any], difficulty: int) -> Any:
    """The D1-D5 column of Table 9 for one template."""
    return values[difficulty - 1]


COMMON_RULES: tuple[str, ...] = (
    "Follow the procedure exactly and in order: make every tool call it asks for, "
    "one call at a time, and no other calls.",
    "Never compute a tool's result yourself; always use the value the tool returns.",
    "Pass arguments exactly as the procedure states them (integers, or a list of integers).",
)


def render_prompt(template: Template, params: Mapping[str, Any]) -> str:
    """The PROCEDURE / RULES / ANSWER FORMAT prompt with all numbers inlined."""
    tools = ", ".join(
        f"{n}({', '.join(p.name for p in TOOL_INFOS[n].params)})" for n in template.tools
    )
    steps = "\n".join(f"{k}. {s}" for k, s in enumerate(template.procedure(params), start=1))
    rules = "\n".join(f"- {r}" for r in (*COMMON_RULES, *template.rules))
    return (
        f"You are given the tools: {tools}.\n\n"
        f"PROCEDURE\n{steps}\n\n"
        f"RULES\n{rules}\n\n"
        "ANSWER FORMAT\n"
        "When the procedure is finished, reply with the final integer only, as:\n"
        "ANSWER: <integer>"
    )
