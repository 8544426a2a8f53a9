"""Agents that run benchmark instances, and the scripted agent used by default.

An agent is driven turn by turn: :meth:`Agent.act` receives what happened to its last
action (``None`` at the start) and returns the next :class:`ToolCall` or
:class:`FinalAnswer`. A user's model plugs in through any object with ``act``; the
runner builds it with an :data:`AgentFactory` ``(instance) -> Agent``.

:class:`ScriptedAgent` is a deterministic policy that follows the gold trace but makes
the realistic mistakes of Section 5.1: it skips a step, swaps two steps, gets a
prompt-stated argument wrong, answers early, and sometimes insists on a blocked call
instead of correcting it. Its choices depend only on the instance and its own seed.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentguard.bench.instance import GoldCall, Instance


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The agent asks to run ``name(**args)``."""

    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """The agent answers and ends the run."""

    value: Any


Action = ToolCall | FinalAnswer


@dataclass(frozen=True, slots=True)
class Feedback:
    """What happened to the agent's last action."""

    kind: Literal["result", "blocked", "error"]
    result: Any = None
    message: str = ""


class Agent(Protocol):
    """Anything that can take a turn."""

    def act(self, feedback: Feedback | None) -> Action: ...


AgentFactory = Callable[[Instance], Agent]
"""Builds a fresh agent for one instance (its prompt is ``instance.prompt``)."""


@dataclass(frozen=True, slots=True)
class MistakeRates:
    """Per-run probabilities of each injected mistake (independent draws)."""

    skip: float = 0.12
    swap: float = 0.12
    wrong_arg: float = 0.12
    early: float = 0.1
    insist: float = 0.15


def _rng(instance: Instance, seed: int) -> random.Random:
    digest = hashlib.sha256(f"{instance.id}/{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _key(name: str, args: Mapping[str, Any]) -> tuple[str, str]:
    return name, repr(sorted(args.items()))


@dataclass(slots=True)
class ScriptedAgent:
    """Follows the gold trace with injected mistakes; repairs or insists after a block."""

    instance: Instance
    seed: int = 0
    rates: MistakeRates = field(default_factory=MistakeRates)
    plan: list[ToolCall] = field(init=False)
    early_at: int | None = field(init=False, default=None)
    mistakes: list[str] = field(init=False, default_factory=list)
    _executed: Counter[tuple[str, str]] = field(init=False, default_factory=Counter)
    _last: Action | None = field(init=False, default=None)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = _rng(self.instance, self.seed)
        self.plan = [ToolCall(c.name, dict(c.args)) for c in self.instance.gold_trace]
        self._inject()

    def _inject(self) -> None:
        rng, rates, n = self._rng, self.rates, len(self.plan)
        if n > 1 and rng.random() < rates.wrong_arg:
            candidates = [k for k, c in enumerate(self.instance.gold_trace) if c.prompt_keys]
            if candidates:
                k = rng.choice(candidates)
                gold: GoldCall = self.instance.gold_trace[k]
                key = rng.choice(gold.prompt_keys)
                args = dict(gold.args)
                args[key] = args[key] + 1
                self.plan[k] = ToolCall(gold.name, args)
                self.mistakes.append(f"wrong_arg@{k}")
        if n > 2 and rng.random() < rates.swap:
            k = rng.randrange(n - 1)
            self.plan[k], self.plan[k + 1] = self.plan[k + 1], self.plan[k]
            self.mistakes.append(f"swap@{k}")
        if n > 2 and rng.random() < rates.skip:
            k = rng.randrange(1, n)
            del self.plan[k]
            self.mistakes.append(f"skip@{k}")
        if len(self.plan) > 1 and rng.random() < rates.early:
            self.early_at = rng.randrange(1, len(self.plan))
            self.mistakes.append(f"early@{self.early_at}")

    # -- the turn ------------------------------------------------------------------
    def act(self, feedback: Feedback | None) -> Action:
        if feedback is not None and feedback.kind == "blocked" and self._last is not None:
            if self._rng.random() < self.rates.insist:
                return self._last  # insist: the identical call again
            self._repair()
        elif feedback is not None and isinstance(self._last, ToolCall):
            self._executed[_key(self._last.name, self._last.args)] += 1
        action = self._next()
        self._last = action
        return action

    def _next(self) -> Action:
        if self.early_at is not None and self._calls_done() >= self.early_at:
            return FinalAnswer(self._answer())
        if self.plan:
            return self.plan.pop(0)
        return FinalAnswer(self._answer())

    def _calls_done(self) -> int:
        return sum(self._executed.values())

    def _repair(self) -> None:
        """Listen to a block: drop the early-answer idea and re-plan from the gold trace."""
        self.early_at = None
        remaining = Counter(self._executed)
        plan = []
        for c in self.instance.gold_trace:
            key = _key(c.name, c.args)
            if remaining[key] > 0:
                remaining[key] -= 1
            else:
                plan.append(ToolCall(c.name, dict(c.args)))
        self.plan = plan

    def _answer(self) -> str:
        gold = Counter(_key(c.name, c.args) for c in self.instance.gold_trace)
        complete = not (gold - self._executed)
        value = self.instance.expected_answer if complete else self.instance.expected_answer + 1
        return f"ANSWER: {value}"


def scripted_factory(seed: int = 0, rates: MistakeRates | None = None) -> AgentFactory:
    """A factory of :class:`ScriptedAgent` with one seed and mistake profile."""

    def make(instance: Instance) -> Agent:
        return ScriptedAgent(instance, seed, rates or MistakeRates())

    return make


def perfect_factory() -> AgentFactory:
    """Scripted agents that make no mistakes (they reproduce the gold trace)."""
    return scripted_factory(0, MistakeRates(0.0, 0.0, 0.0, 0.0, 0.0))
