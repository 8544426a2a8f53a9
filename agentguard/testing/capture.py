"""Capture the firewall's decisions and log events in your own tests.

Like structlog's ``capture_logs``: inside the ``with`` block every decision made by any
:class:`~agentguard.enforcement.firewall.Firewall` in this process, and every log event
it emits (with the same fields as the JSON-lines log), is collected::

    from agentguard.testing.capture import capture_firewall

    with capture_firewall() as cap:
        agent.run("refund order A1")
    assert cap.actions() == [("block", "issue_refund"), ("allow", "verify_identity"), ...]
    assert cap.violated("identity_first")
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agentguard.enforcement import hooks
from agentguard.enforcement.decision import Action, Decision


@dataclass
class Captured:
    """Decisions and log events collected by :func:`capture_firewall`."""

    decisions: list[Decision] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def actions(self) -> list[tuple[str, str]]:
        """``(action, tool)`` per decision, in order."""
        return [(d.action.value, d.tool) for d in self.decisions]

    def blocked(self) -> list[Decision]:
        """Decisions whose call did not run (blocked or stopped)."""
        return [d for d in self.decisions if not d.executes]

    def stops(self) -> list[Decision]:
        return [d for d in self.decisions if d.action is Action.STOP]

    def violated(self, constraint: str) -> bool:
        """Did any decision or late-violation event name ``constraint``?"""
        if any(v.constraint == constraint for d in self.decisions for v in d.violations):
            return True
        return any(
            v.get("constraint") == constraint for e in self.events for v in e.get("violations", ())
        )

    def of_event(self, event: str) -> list[dict[str, Any]]:
        """The log events with this ``event`` name (e.g. ``agentguard.late_violation``)."""
        return [e for e in self.events if e.get("event") == event]


@contextmanager
def capture_firewall() -> Iterator[Captured]:
    """Collect every decision and log event made while the block runs."""
    captured = Captured()
    sink = hooks.Sink(captured.decisions.append, captured.events.append)
    hooks.SINKS.append(sink)
    try:
        yield captured
    finally:
        hooks.SINKS.remove(sink)


__all__ = ["Captured", "capture_firewall"]
