"""Monitoring plans: what a constraint compiles to, before any run (shared, immutable).

A plan holds compiled machines; the run-time nodes (:mod:`agentguard.monitor.nodes`)
hold one run's states over them, so one compiled spec serves every monitor.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

from agentguard.language import ast as A
from agentguard.monitor.machine import Machine

Site = tuple["str | None", "tuple[str | int, ...]", bool]


@dataclass(frozen=True, slots=True)
class AutomatonPlan:
    machine: Machine


@dataclass(frozen=True, slots=True)
class QuantPlan:
    kind: str
    var: str
    domain: A.Domain | A.ListLiteral | None
    machine: Machine
    sites: tuple[Site, ...]
    formula: A.Quantified | None = None


@dataclass(frozen=True, slots=True)
class BoolPlan:
    """A boolean combination, verdicts combined in Kleene logic.

    ``split`` marks a conjunction of independent parts (no shared tool name) that the
    compiler monitors separately to keep construction bounded (monitor/decompose.py):
    ``late`` is empty when the split is exact and earliest, else it says why verdicts may
    come later than on the whole formula (still sound)."""

    op: str  # and | or | not
    children: tuple[Plan, ...]
    split: bool = False
    late: str = ""


@dataclass(frozen=True, slots=True)
class FallbackPlan:
    formula: A.Formula
    reason: str


Plan = Union[AutomatonPlan, QuantPlan, BoolPlan, FallbackPlan]  # noqa: UP007 - a runtime alias on 3.10


def plan_machines(plan: Plan) -> Iterator[Machine]:
    """Every machine of a plan, left to right."""
    if isinstance(plan, (AutomatonPlan, QuantPlan)):
        yield plan.machine
    elif isinstance(plan, BoolPlan):
        for child in plan.children:
            yield from plan_machines(child)
