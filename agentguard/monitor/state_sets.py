"""What the run-time nodes share: verdicts of *sets* of possible machine states, frozen
atoms resolved now, and calls as state-document records.

A leaf under :mod:`agentguard.monitor.nodes` and :mod:`agentguard.monitor.quantified`, so
neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentguard.errors import AgentGuardError
from agentguard.monitor.atoms import Env, FrozenAtom, eval_frozen
from agentguard.monitor.machine import Machine
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.registry import Registry
from agentguard.trace.model import UNKNOWN, Call


def set_verdict(states: Iterable[int], machine: Machine) -> Verdict:
    """The verdict of a set of possible states: decided only if all of them agree."""
    out: Verdict | None = None
    for s in states:
        v = machine.verdict(s)
        if out is None:
            out = v
        elif out is not v:
            return Verdict.PENDING
    return out or Verdict.PENDING


def set_final(states: Iterable[int], machine: Machine) -> bool | None:
    """The truth if the run ended in any of ``states``: known only if all agree."""
    out: bool | None = None
    first = True
    for s in states:
        v = machine.final(s)
        if v is None:
            return None
        if first:
            out, first = v, False
        elif out is not v:
            return None
    return out


def resolve_frozen(
    machine: Machine, state: int, env: Env, registry: Registry, metrics: Mapping[str, Any] | None
) -> int:
    """Resolve the frozen atoms that can be resolved now (metric ones need ``metrics``)."""
    values: dict[int, bool] = {}
    for i in machine.frozen_in(state):
        atom = machine.atoms[i]
        if isinstance(atom, FrozenAtom) and (metrics is not None or not atom.metric):
            values[i] = eval_frozen(atom, env, metrics, registry)
    return machine.resolve(state, values)


def call_doc(c: Call) -> dict[str, Any]:
    """A kept call as a state-document record (the trace's own record shape)."""
    return c.to_record()


def call_from_doc(d: Any, position: int) -> Call:
    """A kept call back from its record; ``ValueError`` for a record of the wrong shape."""
    if not isinstance(d, Mapping) or not isinstance(d.get("tool_name"), str):
        raise ValueError(f"kept call {position} is not a call record")
    arguments = d.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise ValueError(f"kept call {position}: arguments must be a mapping")
    kind = d.get("kind", "tool")
    if kind not in ("tool", "user", "assistant"):
        raise ValueError(f"kept call {position}: kind must be tool, user or assistant")
    try:  # its error and kind as recorded: a spec may test `.ok` or a dialogue event
        return Call(
            d["tool_name"],
            dict(arguments),
            d.get("tool_result", UNKNOWN),
            position,
            d.get("is_error") is True,
            kind,
        )
    except AgentGuardError as exc:  # a kind that does not fit the name
        raise ValueError(f"kept call {position}: {exc}") from None
