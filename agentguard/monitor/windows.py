"""Bounded past operators as windows: ``O[<=k] φ`` and ``H[<=k] φ`` in a size free of k.

Unrolled into k ``Y``/``Z`` registers (``O[<=k] φ = φ | Y O[<=k-1] φ``), a bound cost
quadratic time to build and explore: ``G(b -> O[<=700] a)`` took 44 s and 500 MB. A
window is one register instead, and what it holds does not grow with k.

At position i the window holds entries ``(age, residual)``: for a position j = i - age
within the bound, what φ at j still asks of the suffix from i (φ itself at age 0). The
operator holds at i iff some entry's obligation holds (``O``), or every one (``H``). Two
entries with the same residual progress alike for ever, so only the youngest is kept (it
leaves the window last); for ``O`` a true entry makes every older entry redundant (it
outlives them while it lasts), for ``H`` a false one does. A window therefore has at most
one entry per residual of φ, whatever k: for a purely past φ, whose residuals after one
step are true or false, it is φ at age 0 plus the age of the last position where φ held
(``O``) or failed (``H``), the "steps since" counter of the classic algorithm.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentguard.monitor.formula import DNF_FALSE, DNF_TRUE, FALSE, TRUE, Dnf, Store
from agentguard.monitor.registers import Past, Register

Entry = tuple[int, int]
"""``(age, residual id)``: the obligation left of φ at the position ``age`` steps back."""
Window = tuple[Entry, ...]
"""A window's entries, sorted (youngest first): a canonical, hashable value."""


class Windows:
    """The windows of one machine interned to ints, so a state's registers stay a tuple of
    ints (compared and hashed as cheaply as residual ids). Interning runs under the
    machine's lock; reading an id back does not need it."""

    __slots__ = ("_ids", "table")

    def __init__(self) -> None:
        self.table: list[Window] = []
        self._ids: dict[Window, int] = {}

    def intern(self, window: Window) -> int:
        found = self._ids.get(window)
        if found is None:
            found = len(self.table)
            self.table.append(window)
            self._ids[window] = found
        return found

    def __getitem__(self, i: int) -> Window:
        return self.table[i]


def normalise(reg: Register, entries: Iterable[Entry]) -> Window:
    """The canonical window of ``entries``: past the bound dropped, the neutral residual
    dropped (false for ``O``, true for ``H``), one entry per residual (the youngest), and
    nothing older than an absorbing entry (true for ``O``, false for ``H``)."""
    once = reg.kind == Past.ONCE_WITHIN
    neutral, absorbing = (FALSE, TRUE) if once else (TRUE, FALSE)
    youngest: dict[int, int] = {}
    for age, r in entries:
        if r == neutral or age > reg.bound:
            continue
        if age < youngest.get(r, age + 1):
            youngest[r] = age
    cut = youngest.get(absorbing)
    return tuple(sorted((age, r) for r, age in youngest.items() if cut is None or age <= cut))


def initial(store: Store, reg: Register) -> Window:
    """The window at position 0: φ there, nothing older."""
    return normalise(reg, [(0, store.residual(store.dnf(reg.left)))])


def advance(store: Store, reg: Register, moved: Sequence[Entry]) -> Window:
    """The window at the next position, from the entries progressed over this call:
    φ at the new position at age 0, the moved entries one step older."""
    start = store.residual(store.dnf(reg.left))
    return normalise(reg, [(0, start), *((age + 1, r) for age, r in moved)])


def truth(store: Store, reg: Register, residuals: Iterable[int]) -> Dnf:
    """The operator as one obligation: the disjunction (``O``) or the conjunction (``H``)
    of the entries' residuals."""
    once = reg.kind == Past.ONCE_WITHIN
    out = DNF_FALSE if once else DNF_TRUE
    for r in residuals:
        out = store.d_or(out, store.residuals[r]) if once else store.d_and(out, store.residuals[r])
    return out
