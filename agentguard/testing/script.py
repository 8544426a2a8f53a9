"""Framework-free pieces of a scripted model: the calls it emits, its reactions, its player.

The scripted models (smolagents, LangChain, the OpenAI Agents SDK) build on these, so a
script reads the same whichever framework runs it, and stepping through it (running out,
reacting to what was seen, numbering the calls) works the same way in each: each model
only translates a turn into its framework's message.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from agentguard.errors import AgentGuardError


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One tool call the scripted model will emit.

    ``call_id`` is the tool-call id the model gives it (None: a fresh ``call_<n>``); set
    it to test what a framework does with ids a real model repeats within one turn.
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None


def call(name: str, **args: Any) -> ScriptedCall:
    """``call("lookup_order", order_id="A1")``: shorthand for a :class:`ScriptedCall`."""
    return ScriptedCall(name, args)


def call_with_id(call_id: str, name: str, **args: Any) -> ScriptedCall:
    """A call with the tool-call id the model gives it: ``call_with_id("X", "refund")``."""
    return ScriptedCall(name, args, call_id)


@dataclass(frozen=True, slots=True)
class Reaction:
    """A step decided from the last observation text (a tool output or a guard's refusal)."""

    choose: Callable[[str], Any]


def if_observed(text: str, then: Any, otherwise: Any) -> Reaction:
    """``then`` if the last observation contains ``text`` (case-insensitive), else ``otherwise``."""
    return Reaction(lambda seen: then if text.lower() in seen.lower() else otherwise)


class ScriptExhaustedError(AgentGuardError, RuntimeError):
    """The agent asked the scripted model for more steps than the script has."""


Turn = TypeVar("Turn")
"""What one model turn is in a given framework's script (calls, text, a message)."""


class ScriptPlayer(Generic[Turn]):
    """Plays a script one step per model call and remembers what the model saw.

    ``script`` and ``position`` may be reassigned between turns (a test that adds steps
    to a running agent's model); ``ids`` numbers the calls without a scripted id, and can
    be shared between models whose ids must never repeat (agents that hand off).
    """

    def __init__(self, script: Sequence[Turn | Reaction], ids: Iterator[int] | None = None) -> None:
        self.script: list[Turn | Reaction] = list(script)
        self.position = 0
        self.observations: list[str] = []
        """What the model saw before each turn (tool results, refusals), in order."""
        self._ids = ids if ids is not None else itertools.count(1)

    def next_turn(self, seen: str) -> Turn:
        """The next step, a reaction decided on ``seen``; past the end, an error."""
        if self.position >= len(self.script):
            raise ScriptExhaustedError(
                f"the script has {len(self.script)} steps and the agent asked for another"
            )
        step = self.script[self.position]
        self.position += 1
        self.observations.append(seen)
        if isinstance(step, Reaction):
            chosen: Turn = step.choose(seen)
            return chosen
        return step

    def with_ids(
        self, turn: ScriptedCall | Sequence[ScriptedCall]
    ) -> list[tuple[str, ScriptedCall]]:
        """The calls of one turn, each with its tool-call id (the scripted one, or ``call_<n>``)."""
        calls = [turn] if isinstance(turn, ScriptedCall) else list(turn)
        return [
            (c.call_id if c.call_id is not None else f"call_{next(self._ids)}", c) for c in calls
        ]


def content_text(content: Any) -> str:
    """A message's content as text: a string as is, the text parts of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
