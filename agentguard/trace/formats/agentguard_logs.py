"""agentguard's own outputs: the firewall report (``FirewallReport.to_dict()``) and the
JSON-lines decision log.

When the report carries ``"trace"`` (call records with results) that is the trace.

A decision log records what ran: one ``agentguard.result`` event per executed call, in
trace order, with its result (or, under redaction, only a digest: the result is then
unknown and the call's position is listed in ``metrics["redacted_results"]``) and its
error flag; that is the trace. A log written before result events existed falls back to
the decisions whose ``action`` is ``allow`` or ``allow_override``, minus the calls an
``agentguard.withdrawn`` event says never ran; its results are unknown. A decision log
may hold several runs (the file is appended to); the loader groups events by ``run_id``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import CallLog, arguments_of, mappings, require_list
from agentguard.trace.model import UNKNOWN, Trace

EXECUTED: Final = ("allow", "allow_override")  # a tuple: `in` must not hash user values
DECISION_EVENT: Final = "agentguard.decision"
RESULT_EVENT: Final = "agentguard.result"
MESSAGE_EVENT: Final = "agentguard.message"
"""A dialogue event the firewall observed (``enforcement/log.py`` writes it)."""
WITHDRAWN_EVENT: Final = "agentguard.withdrawn"
FINISH_EVENT: Final = "agentguard.finish"
"""A run's last line (``enforcement/audit.py`` names it too: the trace layer imports no
enforcement)."""
EVENT_KEYS: Final = frozenset(
    {
        "event", "run_id", "step", "tool", "args", "constraint", "layer", "weight",
        "severity", "verdict", "action", "message", "spec", "spec_hash", "timestamp",
        "violations", "pending", "escalated", "call_id", "tool_call_id", "approval",
        "shadow", "is_error", "position", "result", "kind", "seq", "prev", "hmac",
        "detail", "hint",
    }
)  # fmt: skip
"""The keys of decision-log events and report decisions (``enforcement/log.py``,
``Decision.to_dict``); an object under another, with no ``args``, is refused."""
REDACTED_RESULTS: Final = "redacted_results"
"""Metrics key: positions whose result the log holds only as a digest (redacted)."""


def detect_report(value: Any) -> bool:
    """An object with a ``decisions`` list and a ``compliance`` report."""
    # (dict, Mapping): a dict, what JSON gives, is told without the ABC's slower check
    return isinstance(value, (dict, Mapping)) and "decisions" in value and "compliance" in value


def load_report(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    recorded = value.get("trace")
    if isinstance(recorded, list):  # a report that carries its trace's records, results included
        trace = Trace.from_records(recorded, source=source)  # counted as the firewall counts
        return Trace(trace.calls, {**trace.metrics, **_run_metrics(value)})
    decisions = require_list(value.get("decisions"), "'decisions'", source)
    log = CallLog(source)
    for index, decision in enumerate(decisions):
        if not isinstance(decision, Mapping):
            raise TraceRecordError(f"decision {index} is not an object", source=source)
        if decision.get("action") in EXECUTED:
            where = f"decision {index}"
            args = arguments_of(decision, "args", EVENT_KEYS, where, source)
            log.add(decision.get("tool"), args, where=where)
    return log.trace(_run_metrics(value))


def is_event(value: Any) -> bool:
    """One line of a decision log: an object whose ``event`` is an ``agentguard.*`` name."""
    return (
        isinstance(value, (dict, Mapping))
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
    """The executed calls of one run's decision events (see the module docstring)."""
    log = CallLog(source)
    first = events[0] if events else {}
    metrics = _run_metrics(first)
    if any(e.get("event") in (RESULT_EVENT, MESSAGE_EVENT) for e in events):
        redacted = []
        held: dict[int, str] = {}  # trace position -> the event that filled it
        for index, event in enumerate(events):
            if _again(event, held):
                continue
            if event.get("event") == MESSAGE_EVENT:  # a dialogue event, in trace order
                _message(log, event, index)
                continue
            if event.get("event") != RESULT_EVENT:
                continue
            where = f"event {index}"
            slot = log.add(
                event.get("tool"),
                arguments_of(event, "args", EVENT_KEYS, where, source),
                where=where,
            )
            if "result" in event:
                log.set_result(slot, event["result"], error=event.get("is_error") is True)
            else:
                redacted.append(slot)
                if event.get("is_error") is True:
                    log.set_result(slot, UNKNOWN, error=True)
        if redacted:
            metrics[REDACTED_RESULTS] = redacted
        return log.trace(metrics)
    withdrawn = {
        e.get("call_id")
        for e in events
        if e.get("event") == WITHDRAWN_EVENT and e.get("call_id") is not None
    }
    for index, event in enumerate(events):
        if (
            event.get("event") == DECISION_EVENT
            and event.get("action") in EXECUTED
            and (event.get("call_id") is None or event.get("call_id") not in withdrawn)
        ):
            where = f"event {index}"
            log.add(
                event.get("tool"),
                arguments_of(event, "args", EVENT_KEYS, where, source),
                where=where,
            )
    return log.trace(metrics)


def _again(event: Mapping[str, Any], held: dict[int, str]) -> bool:
    """Is ``event`` a message the run observed already, at the same trace position? A
    run continued from a state saved before that position (a LangGraph thread resumed
    from its last model turn's checkpoint) observes the conversation's messages after it
    again: the same message enters the trace once. Calls are never merged: one recorded
    twice may have run twice (a fork of an older checkpoint); the restore refuses that."""
    position = event.get("position")
    if type(position) is not int or event.get("event") != MESSAGE_EVENT:
        return False
    fields = ("tool", "kind", "args")
    identity = json.dumps([event.get(k) for k in fields], sort_keys=True, default=str)
    if held.get(position) == identity:
        return True
    held[position] = identity
    return False


def _message(log: CallLog, event: Mapping[str, Any], index: int) -> None:
    kind, args = event.get("kind"), event.get("args")
    if kind not in ("user", "assistant") or not isinstance(args, Mapping):
        raise TraceRecordError(
            f"event {index}: a message event needs a 'kind' (user or assistant) and 'args'",
            source=log.source,
        )
    fields = {k: v for k, v in args.items() if k != "text"}
    log.message("user" if kind == "user" else "assistant", args.get("text"), **fields)


def _run_metrics(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: value[k] for k in ("run_id", "spec", "spec_hash") if value.get(k) is not None}
