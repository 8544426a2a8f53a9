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
is excused (:meth:`Shadows.start`): the same state, without keeping the calls. A saved
firewall state carries each shadow's monitor state (:meth:`Shadows.save`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from agentguard.language import ast as A
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.peek import Peek
from agentguard.semantics.registry import Registry
from agentguard.trace.model import Call


class Shadows:
    """One shadow monitor per constraint with an admitted violation.

    The calls a shadow skipped are not remembered: its monitor's state is all that
    matters from then on, and it is what a saved state carries (:meth:`save`), so a run
    that re-flags a constraint on every call keeps a flat memory."""

    def __init__(self, registry: Registry | None, uncounted: Iterable[str]) -> None:
        self.registry = registry
        self.uncounted = tuple(uncounted)
        self._monitors: dict[str, Monitor] = {}
        self.active: dict[str, Monitor] = self._monitors  # read-only: empty while none runs
        self._constraints: dict[str, A.Constraint] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._monitors

    def __len__(self) -> int:
        return len(self._monitors)

    def __iter__(self) -> Iterator[str]:
        return iter(self._monitors)

    def names(self) -> tuple[str, ...]:
        return tuple(self._monitors)

    def excuse(self, constraint: A.Constraint, position: int, calls: Sequence[Call]) -> None:
        """The call at ``position`` violated ``constraint`` and ran: build its shadow on
        the executed ``calls`` without that one."""
        self.rebuild(constraint, (position,), calls)

    def rebuild(
        self, constraint: A.Constraint, skipped: Iterable[int], calls: Sequence[Call]
    ) -> None:
        """The shadow of ``constraint`` on ``calls`` without those at the ``skipped``
        positions (a state saved before shadows were saved as monitor states lists them)."""
        self._constraints[constraint.name] = constraint
        monitor = Monitor([constraint], registry=self.registry, uncounted=self.uncounted)
        skip = frozenset(skipped)
        for call in calls:
            if call.position not in skip:
                monitor.advance(call)
        self._monitors[constraint.name] = monitor

    def start(self, constraint: A.Constraint, monitor: Monitor) -> None:
        """A call violated ``constraint`` and ran: its shadow is ``monitor``, in the state
        just before that call (nothing excused earlier)."""
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
                continue
            if monitor.peek(call).verdicts[name] is Verdict.VIOLATED:
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

    def save(self) -> dict[str, dict[str, Any]]:
        """Each shadow's monitor state (its size is the monitor's, not the run's)."""
        return {name: monitor.save() for name, monitor in self._monitors.items()}

    def restore(self, constraint: A.Constraint, doc: Mapping[str, Any]) -> None:
        """The shadow of ``constraint`` continuing from a state :meth:`save` wrote
        (``MonitorStateError`` if it is not one of this constraint)."""
        self._constraints[constraint.name] = constraint
        self._monitors[constraint.name] = Monitor.restore(
            [constraint], doc, registry=self.registry, uncounted=self.uncounted
        )


__all__ = ["Shadows"]
