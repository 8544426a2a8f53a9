"""agentguard's own outputs: the firewall report (``FirewallReport.to_dict()``) and the
JSON-lines decision log.

When the report carries ``"trace"`` (call records with results) that is the trace.
Otherwise only executed calls form the trace: decisions whose ``action`` is ``allow`` or
``allow_override``, in order (blocked and stopped proposals are left out). Neither
output records tool results, so every result is unknown; the final answer is the
``final_answer`` call the integrations propose. A decision log may hold several runs
(the file is appended to); the loader groups events by ``run_id``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import CallLog, mappings, require_list
from agentguard.trace.model import Trace

EXECUTED: Final = ("allow", "allow_override")  # a tuple: `in` must not hash user values
DECISION_EVENT: Final = "agentguard.decision"


def detect_report(value: Any) -> bool:
    """An object with a ``decisions`` list and a ``compliance`` report."""
    return isinstance(value, Mapping) and "decisions" in value and "compliance" in value


def load_report(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    recorded = value.get("trace")
    if isinstance(recorded, list):  # a report that carries its trace's records, results included
        trace = Trace.from_records(recorded, source=source)
        return Trace(trace.calls, {"num_tool_calls": len(trace), **_run_metrics(value)})
    decisions = require_list(value.get("decisions"), "'decisions'", source)
    log = CallLog(source)
    for index, decision in enumerate(decisions):
        if not isinstance(decision, Mapping):
            raise TraceRecordError(f"decision {index} is not an object", source=source)
        if decision.get("action") in EXECUTED:
            log.add(decision.get("tool"), decision.get("args"), where=f"decision {index}")
    return log.trace(_run_metrics(value))


def is_event(value: Any) -> bool:
    """One line of a decision log: an object whose ``event`` is an ``agentguard.*`` name."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("event"), str)
        and value["event"].startswith("agentguard.")
    )


def detect_log(value: Any) -> bool:
    """A list of decision-log events (all from one run)."""
    return mappings(value) and bool(value) and all(is_event(e) for e in value)


def load_log(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    runs = {e.get("run_id") for e in value}
    if len(runs) > 1:
        raise TraceRecordError(
            f"decision log mixes {len(runs)} runs; load the file to get one trace per run",
            source=source,
        )
    return events_trace(value, source)


def events_trace(events: Sequence[Mapping[str, Any]], source: str) -> Trace:
    """The executed calls of one run's decision events."""
    log = CallLog(source)
    for index, event in enumerate(events):
        if event.get("event") == DECISION_EVENT and event.get("action") in EXECUTED:
            log.add(event.get("tool"), event.get("args"), where=f"event {index}")
    first = events[0] if events else {}
    return log.trace(_run_metrics(first))


def _run_metrics(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: value[k] for k in ("run_id", "spec", "spec_hash") if value.get(k) is not None}
