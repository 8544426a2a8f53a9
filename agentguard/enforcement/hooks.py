"""Process-wide listeners for decisions and log events (what ``agentguard.testing`` uses).

Kept as a plain list so the firewall's hot path pays one truthiness check when nobody
listens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentguard.enforcement.decision import Decision


@dataclass(frozen=True, slots=True)
class Sink:
    """Receives every decision and every log event (as the dict written to the log)."""

    on_decision: Callable[[Decision], None]
    on_event: Callable[[dict[str, Any]], None]


SINKS: list[Sink] = []


def publish_decision(decision: Decision) -> None:
    for sink in list(SINKS):
        sink.on_decision(decision)


def publish_event(event: dict[str, Any]) -> None:
    for sink in list(SINKS):
        sink.on_event(event)
