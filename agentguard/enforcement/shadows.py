"""Monitors that keep judging constraints the run has already violated.

Once a violation of a constraint was let through (a BLOCK_AND_WARN override, a TOLERATE,
a final answer past its send-back limit, a result that broke it after the call ran), the
main monitor's verdict of that constraint is VIOLATED for good, and no later call looks
like a *new* violation of it. Appendix A.5.3 wants each later violation warned again: an
override covers one call. So each such constraint gets a shadow monitor of its own that
sees the executed trace *without* the calls whose violation was already admitted, and
asks it whether the next call violates the constraint again.

A shadow starts either from the executed calls (:meth:`Shadows.excuse`, when the firewall
keeps its trace) or from a snapshot of the main monitor taken just before the call that
is excused (:meth:`Shadows.start`): the same state, without keeping the calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from agentguard.language import ast as A
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.peek import Peek
from agentguard.semantics.registry import Registry
from agentguard.trace.model import Call


class Shadows:
    """One shadow monitor per constraint with an admitted violation."""

    def __init__(self, registry: Registry | None, uncounted: Iterable[str]) -> None:
        self.registry = registry
        self.uncounted = tuple(uncounted)
        self._monitors: dict[str, Monitor] = {}
        self.active: dict[str, Monitor] = self._monitors  # read-only: empty while none runs
        self._constraints: dict[str, A.Constraint] = {}
        self.excused: dict[str, set[int]] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._monitors

    def __len__(self) -> int:
        return len(self._monitors)

    def __iter__(self) -> Iterator[str]:
        return iter(self._monitors)

    def names(self) -> tuple[str, ...]:
        return tuple(self._monitors)

    def excuse(self, constraint: A.Constraint, position: int, calls: Sequence[Call]) -> None:
        """The call at ``position`` violated ``constraint`` and ran: rebuild its shadow on
        ``calls`` without every excused call."""
        name = constraint.name
        self.excused.setdefault(name, set()).add(position)
        self._constraints[name] = constraint
        monitor = Monitor([constraint], registry=self.registry, uncounted=self.uncounted)
        skip = self.excused[name]
        for call in calls:
            if call.position not in skip:
                monitor.advance(call)
        self._monitors[name] = monitor

    def start(self, constraint: A.Constraint, position: int, monitor: Monitor) -> None:
        """The call at ``position`` violated ``constraint`` and ran: its shadow is
        ``monitor``, in the state just before that call (nothing excused earlier)."""
        self.excused.setdefault(constraint.name, set()).add(position)
        self._constraints[constraint.name] = constraint
        self._monitors[constraint.name] = monitor

    def advance(self, call: Call, admitted: Iterable[str]) -> list[str]:
        """Commit an executed call; returns the shadows it violates again (not admitted).

        The call is excused (its shadow skips it) for an ``admitted`` constraint and for
        each one it violates again: the shadow stays as it was before the call.
        """
        admitted = set(admitted)
        newly: list[str] = []
        for name, monitor in self._monitors.items():
            if name in admitted:
                self.excused[name].add(call.position)
                continue
            if monitor.peek(call).verdicts[name] is Verdict.VIOLATED:
                self.excused[name].add(call.position)
                newly.append(name)
                continue
            monitor.advance(call)
        return newly

    def peek(self, name: str, extra: Sequence[Call], call: Call, ending: bool) -> Peek:
        return self._monitors[name].peek([*extra, call], ending=ending)

    def base(self, name: str, extra: Sequence[Call]) -> Verdict:
        monitor = self._monitors[name]
        return monitor.peek(list(extra)).verdicts[name] if extra else monitor.verdicts[name]

    def constraint(self, name: str) -> A.Constraint:
        return self._constraints[name]


__all__ = ["Shadows"]
