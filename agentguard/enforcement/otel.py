"""OpenTelemetry spans for firewall decisions (the ``[otel]`` extra).

Every decision becomes one span ``agentguard.decision``, started when the check starts
and ended when the decision is made, as a child of the caller's current span (so a
guarded tool call shows up inside the agent framework's trace), with stable attributes
(:data:`ATTRIBUTES`) and one ``agentguard.violation`` event per violated constraint.

This module is imported only when spans are asked for (``Firewall(otel=True)``, a
``tracer_provider``, or the application already imported ``opentelemetry.trace``): a
firewall without OpenTelemetry pays nothing, not even the import.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, Final

from agentguard.enforcement.decision import Decision
from agentguard.errors import AgentGuardError

SPAN_NAME: Final = "agentguard.decision"
VIOLATION_EVENT: Final = "agentguard.violation"
ATTRIBUTES: Final = (
    "agentguard.run_id",
    "agentguard.spec",
    "agentguard.spec_hash",
    "agentguard.mode",
    "agentguard.step",
    "agentguard.call_id",
    "agentguard.tool",
    "agentguard.action",
    "agentguard.constraints",
    "agentguard.severity",
    "agentguard.escalated",
)
"""Set on every decision span (plus ``agentguard.tool_call_id`` when the framework gave
one and ``agentguard.shadow`` in shadow mode)."""

Scrub = Callable[[Decision, str], str]
"""Hides redacted argument values in a text (the decision log's redaction)."""


class OtelMissingError(AgentGuardError, ImportError):
    """OpenTelemetry spans were asked for but opentelemetry-api is not installed."""


@functools.cache
def _version() -> str:
    """The installed agentguard version, for the tracer's instrumentation scope (read
    once: the package metadata lookup cost more than building the firewall)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentguard")
    except PackageNotFoundError:
        return "unknown"


def wanted(otel: bool | None, tracer_provider: Any) -> bool:
    """Should the firewall emit spans? ``otel=None`` means: only if a provider was given
    or the application already uses OpenTelemetry (so nothing is imported otherwise)."""
    if otel is not None:
        return otel
    return tracer_provider is not None or "opentelemetry.trace" in sys.modules


class DecisionSpans:
    """Emits one span per decision on a tracer of the given (or global) provider."""

    def __init__(self, tracer_provider: Any, *, run_id: str, spec: str | None, spec_hash: str):
        try:
            from opentelemetry import trace
        except ImportError:
            raise OtelMissingError(
                "OpenTelemetry spans need opentelemetry-api: pip install 'agentguard[otel]'"
            ) from None
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self._tracer = provider.get_tracer("agentguard", _version())
        # the global provider until the application sets one is a proxy whose spans go
        # nowhere: while it is, a decision builds no span (the import of
        # opentelemetry.trace by a framework turns spans on, not a configured SDK)
        self._global = trace.get_tracer_provider if tracer_provider is None else None
        self._silent = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
        self._common: dict[str, Any] = {
            "agentguard.run_id": run_id,
            "agentguard.spec": spec or "",
            "agentguard.spec_hash": spec_hash,
        }

    def emit(self, decision: Decision, *, start_ns: int, mode: str, scrub: Scrub) -> None:
        """One finished span for ``decision`` (its check began at ``start_ns``); none
        while the global provider is OpenTelemetry's default no-op one."""
        if self._global is not None and isinstance(self._global(), self._silent):
            return
        action = decision.shadow if decision.shadow is not None else decision.action
        first = decision.violations[0] if decision.violations else None
        attributes: dict[str, Any] = {
            **self._common,
            "agentguard.mode": mode,
            "agentguard.step": decision.step,
            "agentguard.call_id": decision.call_id,
            "agentguard.tool": decision.tool,
            "agentguard.action": action.value,
            "agentguard.constraints": [v.constraint for v in decision.violations],
            "agentguard.severity": str(first.severity) if first is not None else "",
            "agentguard.escalated": decision.escalated,
        }
        if decision.tool_call_id is not None:
            attributes["agentguard.tool_call_id"] = decision.tool_call_id
        if decision.shadow is not None:
            attributes["agentguard.shadow"] = True
        span = self._tracer.start_span(SPAN_NAME, attributes=attributes, start_time=start_ns)
        for v in decision.violations:
            span.add_event(
                VIOLATION_EVENT,
                {
                    "agentguard.constraint": v.constraint,
                    "agentguard.severity": str(v.severity),
                    "agentguard.layer": v.layer or "",
                    "agentguard.weight": v.weight,
                    "agentguard.message": v.message,
                    "agentguard.detail": scrub(decision, v.detail),
                    "agentguard.hint": scrub(decision, v.hint),
                },
            )
        span.end()


__all__ = [
    "ATTRIBUTES",
    "SPAN_NAME",
    "VIOLATION_EVENT",
    "DecisionSpans",
    "OtelMissingError",
    "wanted",
]
