"""The execution protocol's vocabulary: a call in flight, what a call would violate,
one proposed call of a batch, how an error is kept as a result.

Leaf of the firewall: the Firewall and the state documents share these without
importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Union

from agentguard.enforcement.decision import Action, Decision
from agentguard.errors import AgentGuardError
from agentguard.monitor.verdict import Verdict
from agentguard.tools.checker import ToolProblem
from agentguard.trace.json_values import text_of
from agentguard.trace.model import Call

ProposedCall = Union[  # noqa: UP007 - runtime alias on 3.10
    tuple[str, Mapping[str, Any]], tuple[str, Mapping[str, Any], Union[str, None]]  # noqa: UP007
]
"""One call of a batch: ``(name, args)`` or ``(name, args, tool_call_id)``."""


class FirewallProtocolError(AgentGuardError, ValueError):
    """``start``, ``complete`` or ``withdraw`` named a decision that is not in flight."""


@dataclass(slots=True)
class Flight:
    """An allowed call whose result has not been recorded yet (or that never ran).

    ``relied`` names the calls in flight when it was approved: its approval assumed they
    come first. ``position`` is the number of executed calls at approval time.
    """

    decision: Decision
    call: Call
    relied: frozenset[str]
    position: int
    started: bool = False


class Findings(NamedTuple):
    """What a call would violate on a prefix, before the severity policy."""

    verdicts: Mapping[str, Verdict]
    violated: list[str]
    deferred: list[str]
    errors: Mapping[str, tuple[str, ...]]
    problems: list[ToolProblem]
    clean: bool
    """Nothing violated, deferred, failed or mis-declared: the call is allowed as is
    (said once, by whoever builds the findings: it is read on every call)."""

    def names(self, fail_closed: bool) -> set[str]:
        out = {*self.violated, *self.deferred, *(p.constraint for p in self.problems)}
        if fail_closed:
            out.update(self.errors)
        return out


def unpack(entry: ProposedCall) -> tuple[str, Mapping[str, Any], str | None]:
    if len(entry) == 3:  # (name, args, tool_call_id)
        return entry[0], entry[1], entry[2]
    return entry[0], entry[1], None


def call_of(args: tuple[Any, ...]) -> tuple[str, Mapping[str, Any]]:
    """The (tool, args) a guarded firewall step was working on, for scrubbing its error."""
    first = args[0]
    if isinstance(first, Flight):
        first = first.call
    if isinstance(first, Call):
        return first.name, first.args
    if isinstance(first, str) and len(args) > 1 and isinstance(args[1], Mapping):
        return first, args[1]
    return "", {}


def named(decision: Decision) -> str:
    return f"{decision.tool} (call {decision.call_id or '?'})"


def error_text(error: str | BaseException) -> str:
    """How a tool's error is kept as the call's result: ``Error: Type: message``."""
    if isinstance(error, BaseException):
        return f"Error: {type(error).__name__}: {text_of(error)}"
    return error if error.startswith("Error") else f"Error: {error}"


def refusal(old: Decision, message: str) -> Decision:
    """A BLOCK for an allowed call that must not run after all (same ``call_id``)."""
    return Decision(
        Action.BLOCK,
        old.tool,
        old.args,
        old.step,
        (),
        message,
        (),
        False,
        old.call_id,
        old.tool_call_id,
    )


__all__ = [
    "Findings",
    "FirewallProtocolError",
    "Flight",
    "ProposedCall",
    "call_of",
    "error_text",
    "named",
    "refusal",
    "unpack",
]
