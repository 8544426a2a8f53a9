"""Framework-free pieces of a scripted model: the calls it emits and its reactions.

Both scripted models (smolagents, LangChain) build on these, so a script reads the same
whichever framework runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
