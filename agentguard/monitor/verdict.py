"""Three-valued verdicts on prefixes and the enforceability class of a constraint."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Verdict(str, enum.Enum):
    """What a prefix already decides about a constraint.

    SATISFIED: every continuation satisfies it (ending now included); VIOLATED: every
    continuation violates it (a bad prefix); PENDING: neither yet.
    """

    SATISFIED = "satisfied"
    VIOLATED = "violated"
    PENDING = "pending"

    @property
    def decided(self) -> bool:
        return self is not Verdict.PENDING


class Enforceability(str, enum.Enum):
    """How much of a constraint the firewall can enforce before the run ends (LTLf)."""

    SAFETY = "safety"  # every violation has a bad prefix: fully enforceable online
    MIXED = "mixed"  # some violations have bad prefixes; the rest are found at the end
    LIVENESS = "liveness"  # no bad prefix: deferred to the end of the run


@dataclass(frozen=True, slots=True)
class Classification:
    """``kind`` with ``exact`` False means "at least" that: data or predicates prevented an
    exact answer (a non-exact MIXED may really be liveness or, rarely, safety)."""

    kind: Enforceability
    exact: bool = True
    reason: str = ""

    def __str__(self) -> str:
        if self.exact:
            return self.kind.value
        return (
            f"at least {self.kind.value}" if self.kind is Enforceability.MIXED else self.kind.value
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "exact": self.exact,
            "reason": self.reason,
            "text": str(self),
        }


def kleene_and(a: Verdict, b: Verdict) -> Verdict:
    if Verdict.VIOLATED in (a, b):
        return Verdict.VIOLATED
    if a is Verdict.SATISFIED and b is Verdict.SATISFIED:
        return Verdict.SATISFIED
    return Verdict.PENDING


def kleene_or(a: Verdict, b: Verdict) -> Verdict:
    if Verdict.SATISFIED in (a, b):
        return Verdict.SATISFIED
    if a is Verdict.VIOLATED and b is Verdict.VIOLATED:
        return Verdict.VIOLATED
    return Verdict.PENDING


def kleene_not(a: Verdict) -> Verdict:
    if a is Verdict.SATISFIED:
        return Verdict.VIOLATED
    if a is Verdict.VIOLATED:
        return Verdict.SATISFIED
    return Verdict.PENDING
