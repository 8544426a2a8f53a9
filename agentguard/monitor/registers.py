"""Past-time registers: how a compiled machine remembers ``Y Z O H S``.

A register holds, at position i, a *residual*: the obligation on the suffix from i under
which its past-time subformula holds at i. For a purely past operand it is a constant
after one step; with future operators inside (``O F a``) it is a real obligation, which
keeps mixed past/future formulas exact. A bounded ``O[<=k]``/``H[<=k]`` is one register
too, whose content is a *window* (:mod:`agentguard.monitor.windows`): the few obligations
of the last k positions that still matter, each with its age, so neither building nor
stepping it grows with k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


class Past:
    """The kind of a register (the past-time operator it follows)."""

    YESTERDAY: Final = "yesterday"  # Y φ: φ held at the previous position (false at 0)
    WEAK_YESTERDAY: Final = "weak_yesterday"  # Z φ: as Y, but true at position 0
    ONCE: Final = "once"  # O φ
    HISTORICALLY: Final = "historically"  # H φ
    SINCE: Final = "since"  # φ S ψ
    ONCE_WITHIN: Final = "once_within"  # O[<=k] φ: a window of ages 0..k
    HISTORICALLY_WITHIN: Final = "historically_within"  # H[<=k] φ


WINDOWED: Final = frozenset({Past.ONCE_WITHIN, Past.HISTORICALLY_WITHIN})
"""Kinds whose content is a window id (:mod:`agentguard.monitor.windows`), not a residual."""


EMPTY_VALUE: Final = {
    Past.YESTERDAY: False,
    Past.WEAK_YESTERDAY: True,
    Past.ONCE: False,
    Past.HISTORICALLY: True,
    Past.SINCE: False,
    Past.ONCE_WITHIN: False,
    Past.HISTORICALLY_WITHIN: True,
}
"""A register's truth on the empty suffix (the run ending here)."""


@dataclass(frozen=True, slots=True)
class Register:
    """A past-time subformula. With v = the content progressed over the call at i:
    ``O φ``: φ ∨ v, ``H φ``: φ ∧ v, ``φ S ψ``: ψ ∨ (φ ∧ v), ``Y φ``/``Z φ``: φ progressed;
    ``O[<=k] φ`` / ``H[<=k] φ``: a window (the disjunction / conjunction of its entries).
    """

    kind: str  # a Past constant
    left: int  # node id of the operand (SINCE: the left operand)
    right: int = -1  # SINCE: the right operand
    bound: int = 0  # ONCE_WITHIN / HISTORICALLY_WITHIN: k, the oldest age the window keeps

    @property
    def windowed(self) -> bool:
        """Does this register hold a window id (a bounded operator) instead of a residual?"""
        return self.kind in WINDOWED
