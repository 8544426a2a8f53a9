"""What the miner finds: argument schemas, constraints with their evidence, the spec.

Plain frozen data, shared by every stage of :mod:`agentguard.mining` (the discovery
modules fill it, :mod:`~agentguard.mining.prune` filters it, and
:mod:`~agentguard.mining.render` prints it), so no stage imports another's internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentguard.language.ast import Spec
from agentguard.severity import Severity


@dataclass(frozen=True, slots=True)
class Evidence:
    """How a candidate fared on the mined traces, in pm4py's terms.

    ``activated``: traces where the constraint's trigger occurs (pm4py's *support*);
    ``satisfied``: those of them where it held (pm4py's *confidence*); ``traces``: all
    traces. A trace where it is not activated satisfies it vacuously, so it holds on
    ``traces - (activated - satisfied)`` traces.
    """

    traces: int
    activated: int
    satisfied: int

    @property
    def violated(self) -> int:
        return self.activated - self.satisfied

    @property
    def support(self) -> float:
        """Share of the traces that activate the constraint."""
        return self.activated / self.traces if self.traces else 0.0

    @property
    def confidence(self) -> float:
        """Share of the activating traces on which it holds."""
        return self.satisfied / self.activated if self.activated else 0.0

    @property
    def holds(self) -> float:
        """Share of all traces on which it holds (vacuous holds included)."""
        return (self.traces - self.violated) / self.traces if self.traces else 0.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One mined constraint: its template, the tools and fields it relates, its formula.

    ``key`` identifies it within its template (tool names, argument paths) and is what
    :mod:`~agentguard.mining.prune` reasons about; ``formula`` is AgentLTL text.
    """

    template: str
    key: tuple[Any, ...]
    formula: str
    evidence: Evidence
    layer: str
    severity: Severity
    note: str = ""
    rejects: int = 0  # negative traces it is violated on (with ``negative=``)


@dataclass(frozen=True, slots=True)
class ArgumentSchema:
    """What one argument of one tool was seen to be: its type, presence and values."""

    name: str
    type: str
    optional: bool
    enum: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """A tool as the traces used it: its arguments and how many calls were seen."""

    name: str
    arguments: tuple[ArgumentSchema, ...]
    calls: int


@dataclass(frozen=True, slots=True)
class MinedSpec:
    """A proposed spec: the text to review, the parsed spec, and the evidence behind it.

    ``pruned`` holds the candidates dropped because the kept ones imply them;
    ``separating`` is None unless negative traces were given, else how many of them
    the spec rejects. ``unconfirmed`` lists the kept constraints that ``verify_trace``
    found to hold on fewer traces than the miner counted (a miner bug: always empty).
    """

    text: str
    spec: Spec
    tools: tuple[ToolSchema, ...]
    constraints: tuple[Candidate, ...]
    pruned: tuple[Candidate, ...]
    traces: int
    negatives: int = 0
    separating: int | None = None
    unconfirmed: tuple[Candidate, ...] = ()

    def constraint(self, name: str) -> Candidate:
        """The evidence of the constraint printed as ``name``."""
        for c, spec_c in zip(self.constraints, self.spec.constraints, strict=True):
            if spec_c.name == name:
                return c
        raise KeyError(name)
