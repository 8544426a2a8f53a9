"""The five first-failure labels and the verdict a failing check returns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class FailureLabel(str, Enum):
    """Primary cause of the first non-executable action, in tie-break order."""

    SCHEMA = "schema"
    DEPENDENCY = "dependency"
    PRECONDITION = "precondition"
    STATE = "state-consistency"
    INFORMATION = "information"

    @classmethod
    def parse(cls, text: str) -> FailureLabel:
        """Accept the value or the member name, any case, `_` or `-` (``state_consistency``)."""
        key = text.strip().lower().replace("_", "-")
        for member in cls:
            if key in (member.value, member.name.lower()):
                return member
        if key == "state":
            return cls.STATE
        raise ValueError(f"unknown failure label {text!r}; expected one of {LABEL_ORDER_TEXT}")

    @property
    def rank(self) -> int:
        return LABEL_ORDER.index(self)


LABEL_ORDER: tuple[FailureLabel, ...] = tuple(FailureLabel)
LABEL_ORDER_TEXT = ", ".join(label.value for label in LABEL_ORDER)


@dataclass(frozen=True, slots=True)
class Failure:
    """Why one action is not executable: its label and a human-readable reason."""

    label: FailureLabel
    reason: str


__all__ = ["LABEL_ORDER", "Failure", "FailureLabel"]
