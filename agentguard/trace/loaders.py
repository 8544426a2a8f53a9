"""Read traces from files and JSON values, in any supported format (see
:mod:`agentguard.trace.formats`).

Loading many records never stops at the first bad one: each record yields either
a :class:`Trace` or the :class:`TraceRecordError` that names its file and line
(JSON Lines) or item (a JSON list), and lists the formats tried when none fits.
"""

from __future__ import annotations

import gzip
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentguard.errors import TraceError, TraceRecordError
from agentguard.trace._slots import slot_builder
from agentguard.trace.call_records import read_call_record_lists
from agentguard.trace.formats import OBJECT_FORMATS, detect_format, fits, parse
from agentguard.trace.formats.agentguard_logs import events_trace, is_event
from agentguard.trace.formats.records import detect_metrics
from agentguard.trace.json_text import collector_paused, json_reader
from agentguard.trace.model import Trace

_OBJECT_FORMAT_NAMES = frozenset(f.name for f in OBJECT_FORMATS)


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


def trace_from_json(
    value: Any,
    *,
    source: str = "<json>",
    format: str | None = None,
    final_answer: bool = True,
    messages: bool = False,
) -> Trace:
    """Build a trace from any supported JSON shape (the format is detected unless named).

    ``final_answer`` turns a closing text answer into a ``final_answer(answer=...)`` call
    for formats that record the answer as text (chat, Anthropic, LangChain, Responses,
    smolagents CodeAgent). ``messages=True`` keeps the dialogue events (user and
    assistant messages) of the chat formats; by default a trace is its tool calls, as
    before they existed (``verify_trace`` and ``check`` keep them for a spec that names
    one: docs/traces.md, "Dialogue events").
    """
    if isinstance(value, Trace):
        return value if messages else value.without_messages()
    trace, _ = parse(value, source=source, format=format, final_answer=final_answer)
    return trace if messages else trace.without_messages()


def iter_trace_file(
    path: str | Path,
    *,
    format: str | None = None,
    final_answer: bool = True,
    messages: bool = False,
) -> Iterator[LoadedTrace]:
    """Yield every record of a trace file, good or bad, in order.

    Files may be gzipped (``.json.gz``, ``.jsonl.gz``) and may start with a BOM.
    JSON Lines (``.jsonl``, or several lines each starting with ``{``) hold one trace
    per line (line numbers are 1-based), except two whole-file shapes: an agentguard
    decision log (one trace per ``run_id``, numbered by its first line) and one
    conversation written a message per line (one trace, record 1). A ``.json`` file
    holds one trace, a list of traces (metrics records, conversations, ...; numbered
    from 1), or an eval log whose ``samples`` each hold ``messages`` (one trace each).
    ``messages=True`` keeps the dialogue events (see :func:`trace_from_json`).
    """
    if not messages:
        for rec in iter_trace_file(path, format=format, final_answer=final_answer, messages=True):
            tools = rec.trace.without_messages() if rec.trace is not None else None
            yield rec if tools is rec.trace else replace(rec, trace=tools)
        return
    p = Path(path)
    source = str(p)
    text = _read(p, source)
    with collector_paused():  # JSON trees hold no cycles (agentguard/trace/json_text.py)
        records = _file_records(text, p, source, format, final_answer)
    yield from records


def _file_records(
    text: str, p: Path, source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    suffix = Path(p.stem).suffix if p.suffix == ".gz" else p.suffix
    if suffix == ".jsonl" or (suffix != ".json" and _looks_like_jsonl(text)):
        return _jsonl(text, source, format, final_answer)
    try:
        value = json_reader(text)(text)
    except RecursionError:
        return [LoadedTrace(source, 1, None, _too_deep(source, 1))]
    except ValueError as exc:
        if _looks_like_jsonl(text):  # JSON lines saved under a .json name
            return _jsonl(text, source, format, final_answer)
        err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=1)
        return [LoadedTrace(source, 1, None, err)]
    samples = _samples(value)
    if samples is not None:
        return [_load(item, source, i, format, final_answer) for i, item in enumerate(samples, 1)]
    if _is_collection(value, format):
        return [_load(item, source, i, format, final_answer) for i, item in enumerate(value, 1)]
    return [_load(value, source, 1, format, final_answer)]


def _read(path: Path, source: str) -> str:
    """The file's text: UTF-8 with or without a BOM, gunzipped when it ends in ``.gz``.

    Only regular files: a FIFO would block and a device (``/dev/zero``) never end.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise TraceError(f"{source}: not a regular file (a device, FIFO or folder)")
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        return raw.decode("utf-8-sig")
    except OSError as exc:
        raise TraceError(f"{source}: cannot read trace file ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, EOFError) as exc:
        raise TraceError(f"{source}: cannot decode trace file ({exc})") from None


def _samples(value: Any) -> list[Any] | None:
    """The runs of an eval log: Inspect AI's ``{"eval": ..., "samples": [{"messages"}]}`` or
    a tau2 results file's ``{"info": ..., "simulations": [{"messages"}]}``."""
    if not isinstance(value, Mapping):
        return None
    for key in ("samples", "simulations"):
        samples = value.get(key)
        if (
            isinstance(samples, list)
            and samples
            and all(isinstance(s, Mapping) and "messages" in s for s in samples)
        ):
            return samples
    return None


def _is_collection(value: Any, format: str | None) -> bool:
    """A JSON list holding several traces rather than being one."""
    if not isinstance(value, list) or not value:
        return False
    if not all(isinstance(v, (Mapping, list)) for v in value):
        return False
    if format is not None:
        if format in _OBJECT_FORMAT_NAMES or all(isinstance(v, list) for v in value):
            return True
        # a list of conversations (envelopes) each in the forced format, not one conversation
        return not fits(value, format) and any(fits(v, format) for v in value)
    if detect_format(value) not in (None, "records"):
        return False
    return any(detect_format(v) is not None for v in value)


def _jsonl(text: str, source: str, format: str | None, final_answer: bool) -> list[LoadedTrace]:
    lines: list[tuple[int, Any]] = []
    bad: dict[int, LoadedTrace] = {}
    loads = json_reader(text)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line or line.isspace():
            continue
        try:
            lines.append((lineno, loads(line)))
        except (ValueError, RecursionError) as exc:
            err = (
                _too_deep(source, lineno)
                if isinstance(exc, RecursionError)
                else TraceRecordError(f"invalid JSON: {exc}", source=source, record=lineno)
            )
            bad[lineno] = LoadedTrace(source, lineno, None, err)
            lines.append((lineno, _BAD))
    good = [(n, v) for n, v in lines if v is not _BAD]
    if format == "agentguard-log" or (
        format is None and good and all(is_event(v) for _, v in good)
    ):
        return _sorted([*bad.values(), *_decision_log(good, source)])
    values = [v for _, v in good]
    if (
        format is None
        and good
        and all(isinstance(v, Mapping) and detect_format(v) is None for v in values)
        and detect_format(values) is not None
    ):
        return _sorted([*bad.values(), _load(values, source, good[0][0], None, final_answer)])
    read = _metrics_lines(good, format)
    return [
        bad[lineno]
        if value is _BAD
        else _loaded(read[lineno], source, lineno, "metrics")
        if lineno in read
        else _load(value, source, lineno, format, final_answer)
        for lineno, value in lines
    ]


_BAD = object()


def _metrics_lines(lines: list[tuple[int, Any]], format: str | None) -> dict[int, Trace]:
    """The traces of the lines that are metrics records, by line, their call records
    read together (:func:`~agentguard.trace.call_records.read_call_record_lists`).

    A line is taken when ``parse`` would read it as a metrics record with a list of
    calls, unless a call record near it is not plain (those lines are read alone, and a
    bad record is named as ever). Each trace equals what ``parse`` gives its line.
    """
    picked: list[tuple[int, dict[str, Any]]] = []
    for lineno, value in lines:
        if (
            type(value) is dict
            and type(value.get("tool_calls")) is list
            and (
                detect_format(value) == "metrics"
                if format is None
                else format == "metrics" and detect_metrics(value)
            )
        ):
            picked.append((lineno, value))
    columns = read_call_record_lists([v["tool_calls"] for _, v in picked])
    return {
        lineno: Trace.from_read_columns(c, value)
        for (lineno, value), c in zip(picked, columns, strict=True)
        if c is not None
    }


def _decision_log(lines: list[tuple[int, Any]], source: str) -> list[LoadedTrace]:
    runs: dict[Any, list[tuple[int, Mapping[str, Any]]]] = {}
    out: list[LoadedTrace] = []
    for lineno, value in lines:
        if not is_event(value):
            err = TraceRecordError(
                "not an agentguard decision-log event (no 'event': 'agentguard.*')",
                source=source,
                record=lineno,
            )
            out.append(LoadedTrace(source, lineno, None, err))
            continue
        run_id = value.get("run_id")
        if run_id is not None and not isinstance(run_id, (str, int, float, bool)):
            err = TraceRecordError(
                f"malformed decision log: run_id must be a string, got {type(run_id).__name__}",
                source=source,
                record=lineno,
            )
            out.append(LoadedTrace(source, lineno, None, err))
            continue
        runs.setdefault(run_id, []).append((lineno, value))
    for events in runs.values():
        first = events[0][0]
        try:
            trace = events_trace([e for _, e in events], source)
            out.append(LoadedTrace(source, first, trace, None, "agentguard-log"))
        except TraceRecordError as exc:
            out.append(LoadedTrace(source, first, None, _relabel(exc, source, first)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            err = TraceRecordError(
                f"malformed decision log: {type(exc).__name__}: {exc}", source=source, record=first
            )
            out.append(LoadedTrace(source, first, None, err))
    return out


def _sorted(items: list[LoadedTrace]) -> list[LoadedTrace]:
    return sorted(items, key=lambda r: r.record)


def _load(
    value: Any, source: str, record: int, format: str | None, final_answer: bool
) -> LoadedTrace:
    try:
        trace, name = parse(value, source=source, format=format, final_answer=final_answer)
    except TraceRecordError as exc:
        return LoadedTrace(source, record, None, _relabel(exc, source, record))
    except RecursionError:
        return LoadedTrace(source, record, None, _too_deep(source, record))
    return _loaded(trace, source, record, name)


def _loaded(trace: Trace, source: str, record: int, name: str) -> LoadedTrace:
    task_id, trial = task_of(trace)
    return _loaded_trace(source, record, trace, None, name, task_id, trial)


def task_of(trace: Trace) -> tuple[str | None, int | None]:
    """``(task_id, trial)`` from the trace's metrics, when the record carried them."""
    task = trace.metrics.get("task_id")
    trial = trace.metrics.get("trial")
    task_id = str(task) if isinstance(task, (str, int)) and not isinstance(task, bool) else None
    ok_trial = isinstance(trial, int) and not isinstance(trial, bool)
    return task_id, trial if ok_trial else None


def _too_deep(source: str, record: int) -> TraceRecordError:
    return TraceRecordError("JSON nested too deeply to read", source=source, record=record)


def _looks_like_jsonl(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines)


def _relabel(exc: TraceRecordError, source: str, record: int) -> TraceRecordError:
    return TraceRecordError(exc.message, source=source, record=record)


def load_traces(
    *paths: str | Path,
    format: str | None = None,
    final_answer: bool = True,
    messages: bool = False,
) -> list[LoadedTrace]:
    """All records of all files (see :func:`iter_trace_file`)."""
    out: list[LoadedTrace] = []
    for path in paths:
        out.extend(
            iter_trace_file(path, format=format, final_answer=final_answer, messages=messages)
        )
    return out
