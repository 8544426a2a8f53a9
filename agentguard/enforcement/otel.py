"""OpenTelemetry spans for firewall decisions and the tool calls they judge (``[otel]``).

Every proposed call becomes a tool-execution span as OpenTelemetry's GenAI semantic
conventions name it (:data:`TOOL_ATTRIBUTES`): ``execute_tool {tool name}``, with
``gen_ai.operation.name = "execute_tool"``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``
and ``gen_ai.tool.type``, plus ``openinference.span.kind = "TOOL"`` (how Arize Phoenix
and other OpenInference readers classify a span), so observability tools show the calls
as tool calls rather than unknown spans. It starts when the check starts and ends when
the call does: its result (OK), its error, or a refusal, withdrawal or a run that ended
without it (``error.type`` says which: ``agentguard.blocked``, ``agentguard.withdrawn``,
``agentguard.unfinished``, or ``tool_error`` for a call that failed).

Inside it, each decision is one span ``agentguard.decision``, from the start of the check
to the decision, with stable attributes (:data:`ATTRIBUTES`) and one
``agentguard.violation`` event per violated constraint. The tool span is a child of the
caller's current span, so a guarded call shows up inside the agent framework's trace.

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

TOOL_SPAN: Final = "execute_tool"
TOOL_ATTRIBUTES: Final = (
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.type",
    "openinference.span.kind",
    "agentguard.run_id",
    "agentguard.call_id",
)
"""Set on every tool span, named ``execute_tool {gen_ai.tool.name}`` (plus
``error.type`` when the call did not end well)."""
BLOCKED: Final = "agentguard.blocked"
WITHDRAWN: Final = "agentguard.withdrawn"
UNFINISHED: Final = "agentguard.unfinished"
TOOL_ERROR: Final = "tool_error"

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
        self._trace = trace
        self._open: dict[str, Any] = {}  # call id -> its tool span, while the call runs
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
        tool = self._open.pop(decision.call_id, None)  # a re-check: the same call's span
        if tool is None:
            tool = self._tool_span(decision, start_ns)
        inside = self._trace.set_span_in_context(tool)
        span = self._tracer.start_span(
            SPAN_NAME, context=inside, attributes=attributes, start_time=start_ns
        )
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
        if decision.executes:
            self._open[decision.call_id] = tool  # ends with the call (done / withdrawn)
        else:
            self._end(tool, BLOCKED, decision.message)

    def _tool_span(self, decision: Decision, start_ns: int) -> Any:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": TOOL_SPAN,
            "gen_ai.tool.name": decision.tool,
            "gen_ai.tool.call.id": decision.tool_call_id or decision.call_id,
            "gen_ai.tool.type": "function",
            "openinference.span.kind": "TOOL",
            "agentguard.run_id": self._common["agentguard.run_id"],
            "agentguard.call_id": decision.call_id,
        }
        return self._tracer.start_span(
            f"{TOOL_SPAN} {decision.tool}", attributes=attributes, start_time=start_ns
        )

    def done(self, call_id: str, error: str | None) -> None:
        """The call ran: its span ends (with ``tool_error`` when it failed)."""
        span = self._open.pop(call_id, None)
        if span is not None:
            self._end(span, TOOL_ERROR if error is not None else None, error)

    def withdrawn(self, call_id: str, reason: str) -> None:
        span = self._open.pop(call_id, None)
        if span is not None:
            self._end(span, WITHDRAWN, reason)

    def unfinished(self) -> None:
        """The run ended: the calls still open never finished."""
        for span in self._open.values():
            self._end(span, UNFINISHED, "the run ended before the call finished")
        self._open.clear()

    def _end(self, span: Any, error_type: str | None, description: str | None) -> None:
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            status = self._trace.Status(self._trace.StatusCode.ERROR, description or error_type)
            span.set_status(status)
        span.end()


__all__ = [
    "ATTRIBUTES",
    "BLOCKED",
    "SPAN_NAME",
    "TOOL_ATTRIBUTES",
    "TOOL_ERROR",
    "TOOL_SPAN",
    "UNFINISHED",
    "VIOLATION_EVENT",
    "WITHDRAWN",
    "DecisionSpans",
    "OtelMissingError",
    "wanted",
]
