"""One record of a trace file, read: where it came from and its trace or its error.

Shared by the file loaders (:mod:`agentguard.trace.loaders`) and the JSON Lines reader
(:mod:`agentguard.trace.jsonl`), so both build the same record the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentguard.errors import TraceRecordError
from agentguard.trace._slots import slot_builder
from agentguard.trace.formats import parse
from agentguard.trace.model import Trace


@dataclass(frozen=True, slots=True)
class LoadedTrace:
    """One record of a trace file: where it came from and the trace or the error.

    ``format`` names the format it was read as (None when it failed). ``task_id`` and
    ``trial`` identify the benchmark task and attempt when the record names them
    (tau-bench, tau2, or a metrics record with ``task_id``/``trial`` fields); None
    otherwise.
    """

    source: str
    record: int
    trace: Trace | None
    error: TraceRecordError | None
    format: str | None = None
    task_id: str | None = None
    trial: int | None = None

    @property
    def label(self) -> str:
        """``file:record``, then ``task T`` and ``trial N`` when known."""
        out = f"{self.source}:{self.record}"
        if self.task_id is not None:
            out += f" task {self.task_id}"
        if self.trial is not None:
            out += f" trial {self.trial}"
        return out


_loaded_trace = slot_builder(LoadedTrace)


def loaded(trace: Trace, source: str, record: int, format: str) -> LoadedTrace:
    """The record of a trace read as ``format``, its task and trial taken from its metrics."""
    task_id, trial = task_of(trace)
    return _loaded_trace(source, record, trace, None, format, task_id, trial)


def loaded_each(traces: Mapping[int, Trace], source: str, format: str) -> list[LoadedTrace]:
    """``loaded(trace, source, record, format)`` of each record's trace, in one loop (a
    JSON Lines reader builds one per line); a trace whose metrics name no task or trial
    is not looked at further."""
    out: list[LoadedTrace] = []
    append = out.append
    for record, trace in traces.items():
        metrics = trace.metrics
        if "task_id" in metrics or "trial" in metrics:
            task_id, trial = task_of(trace)
            append(_loaded_trace(source, record, trace, None, format, task_id, trial))
        else:
            append(_loaded_trace(source, record, trace, None, format, None, None))
    return out


def load_value(
    value: Any, source: str, record: int, format: str | None, final_answer: bool
) -> LoadedTrace:
    """The record of one JSON value (the format detected unless named), or its error."""
    try:
        trace, name = parse(value, source=source, format=format, final_answer=final_answer)
    except TraceRecordError as exc:
        return LoadedTrace(source, record, None, relabel(exc, source, record))
    except RecursionError:
        return LoadedTrace(source, record, None, too_deep(source, record))
    return loaded(trace, source, record, name)


def too_deep(source: str, record: int) -> TraceRecordError:
    return TraceRecordError("JSON nested too deeply to read", source=source, record=record)


def relabel(exc: TraceRecordError, source: str, record: int) -> TraceRecordError:
    """``exc`` naming ``record`` of ``source``."""
    return TraceRecordError(exc.message, source=source, record=record)


def task_of(trace: Trace) -> tuple[str | None, int | None]:
    """``(task_id, trial)`` from the trace's metrics, when the record carried them."""
    task = trace.metrics.get("task_id")
    trial = trace.metrics.get("trial")
    task_id = str(task) if isinstance(task, (str, int)) and not isinstance(task, bool) else None
    ok_trial = isinstance(trial, int) and not isinstance(trial, bool)
    return task_id, trial if ok_trial else None


__all__ = ["LoadedTrace", "load_value", "loaded", "loaded_each", "relabel", "task_of", "too_deep"]
