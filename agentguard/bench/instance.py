"""One benchmark instance: the fields of AgentLTL Table 10, plus what produced them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.bench.errors import InstanceFileError
from agentguard.trace.model import Trace


@dataclass(frozen=True, slots=True)
class GoldCall:
    """One call of the gold trace and its place in the procedure.

    ``prompt_keys`` are the arguments whose values the prompt states (instance
    parameters). ``after`` holds the positions of the calls the procedure puts directly
    before this one (``None``: the previous call); ``block`` is ``(block, item)`` for a
    call inside a fan-out over a set, whose whole items may come in any order.
    """

    name: str
    args: Mapping[str, Any]
    result: Mapping[str, Any]
    prompt_keys: tuple[str, ...] = ()
    after: tuple[int, ...] | None = None
    block: tuple[int, int] | None = None

    def to_record(self) -> dict[str, Any]:
        """The ``{tool_name, arguments, tool_result}`` record of Appendix A.1.2."""
        return {
            "tool_name": self.name,
            "arguments": dict(self.args),
            "tool_result": dict(self.result),
        }

    @property
    def prompt_args(self) -> dict[str, Any]:
        return {k: self.args[k] for k in self.prompt_keys if k in self.args}


def _positions(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(v) for v in value)


def _block(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    block, item = value
    return (int(block), int(item))


@dataclass(frozen=True, slots=True)
class Instance:
    """A (template, difficulty, seed) instance with its prompt, gold trace, answer and spec."""

    template: str
    difficulty: int
    seed: int
    prompt: str
    gold_trace: tuple[GoldCall, ...]
    expected_answer: int
    tools: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)
    spec_text: str = ""
    aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mode: str = "production"

    @property
    def id(self) -> str:
        """A file-name-safe identifier, e.g. ``fan_out_plus_loop-d3-s42``."""
        base = f"{self.template.replace('+', '_plus_')}-d{self.difficulty}-s{self.seed}"
        tag = self.params.get("tag") if self.mode != "production" else None
        return f"{base}-{tag}" if tag else base

    @property
    def num_tool_calls_expected(self) -> int:
        return len(self.gold_trace)

    def gold_records(self) -> list[dict[str, Any]]:
        return [c.to_record() for c in self.gold_trace]

    def trace(self) -> Trace:
        """The gold trace as an :class:`agentguard.Trace`."""
        return Trace.from_records(self.gold_records(), source=self.id)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<instance>") -> Instance:
        try:
            keys = data.get("gold_prompt_keys") or [[] for _ in data["gold_trace"]]
            structure = data.get("gold_structure") or [{} for _ in data["gold_trace"]]
            gold = tuple(
                GoldCall(
                    r["tool_name"],
                    dict(r["arguments"]),
                    dict(r["tool_result"]),
                    tuple(k),
                    _positions(st.get("after")),
                    _block(st.get("block")),
                )
                for r, k, st in zip(data["gold_trace"], keys, structure, strict=True)
            )
            return cls(
                template=str(data["template"]),
                difficulty=int(data["difficulty"]),
                seed=int(data["seed"]),
                prompt=str(data["prompt"]),
                gold_trace=gold,
                expected_answer=int(data["expected_answer"]),
                tools=tuple(data["tools"]),
                params=dict(data.get("params", {})),
                stats=dict(data.get("stats", {})),
                spec_text=str(data.get("constraints", "")),
                aliases=dict(data.get("aliases", {})),
                mode=str(data.get("mode", "production")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InstanceFileError(f"{source}: not a benchmark instance ({exc!r})") from None

    @classmethod
    def load(cls, path: str | Path) -> Instance:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InstanceFileError(f"{p}: cannot read instance ({exc})") from None
        if not isinstance(data, Mapping):
            raise InstanceFileError(f"{p}: an instance file must hold a JSON object")
        return cls.from_dict(data, source=str(p))
