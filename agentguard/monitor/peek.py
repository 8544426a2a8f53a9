"""What a monitor answers without committing anything: a :class:`Peek` of hypothetical
calls, a :class:`Snapshot` of one constraint's state to fork a monitor from later.

Leaf of the monitor's public answers (the firewall and the shadow monitors read them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agentguard.monitor.counting import CountNode
from agentguard.monitor.fallback import FallbackNode
from agentguard.monitor.judge import JudgePart
from agentguard.monitor.nodes import AutomatonNode, Node
from agentguard.monitor.verdict import Verdict


class Peek:
    """Verdicts if the proposed calls were appended (nothing is committed).

    ``verdicts`` holds every constraint; ``final`` (only when asked with ``ending``) the
    truth if the run ended right after them, None where unknown before the results arrive;
    ``errors`` the user-predicate errors met; ``changed`` the constraints whose verdict
    differs from the current one.
    """

    __slots__ = ("changed", "errors", "final", "verdicts")

    def __init__(
        self,
        verdicts: Mapping[str, Verdict],
        final: Mapping[str, bool | None] | None = None,
        errors: Mapping[str, tuple[str, ...]] | None = None,
        changed: tuple[str, ...] = (),
    ) -> None:
        self.verdicts = verdicts
        self.final: Mapping[str, bool | None] = final if final is not None else {}
        self.errors: Mapping[str, tuple[str, ...]] = errors if errors is not None else {}
        self.changed = changed

    def __repr__(self) -> str:
        return f"Peek(changed={self.changed!r}, final={dict(self.final)!r}, errors={dict(self.errors)!r})"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One constraint's monitor state at ``position`` (see :meth:`Monitor.snapshot`):
    a copy of its node, or, for a node whose state is mutable, its saved document; for a
    constraint with a user predicate, the error judge's part too (monitor/judge.py)."""

    name: str
    position: int
    node: Node | None
    doc: Mapping[str, Any] | None
    judge: JudgePart | None = None
    provenance: Any = None  # the provenance indexes then (ProvenanceState.save)


COPYABLE: Final = (AutomatonNode, CountNode, FallbackNode)
"""Nodes whose stepping replaces their state values (never mutates them; a fallback node
copies its shared list of calls before stepping past a copy's): a shallow copy is a
snapshot."""


__all__ = ["COPYABLE", "Peek", "Snapshot"]
