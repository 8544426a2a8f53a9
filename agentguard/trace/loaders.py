"""Read traces from files: metrics records, JSON Lines of them, OpenAI chat messages.

Loading many records never stops at the first bad one: each record yields either
a :class:`Trace` or the :class:`TraceRecordError` that names its file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentguard.errors import TraceError, TraceRecordError
from agentguard.trace.model import Trace


@dataclass(frozen=True, slots=True)
class LoadedTrace:
    """One record of a trace file: where it came from and the trace or the error."""

    source: str
    record: int
    trace: Trace | None
    error: TraceRecordError | None

    @property
    def label(self) -> str:
        return f"{self.source}:{self.record}"


def trace_from_json(value: Any, *, source: str = "<json>") -> Trace:
    """Build a trace from any supported JSON shape.

    * a metrics record (object with ``tool_calls``),
    * an object with ``messages`` (OpenAI chat format), or a list of such messages,
    * a bare list of ``{tool_name, arguments, tool_result}`` records.
    """
    if isinstance(value, Trace):
        return value
    if isinstance(value, Mapping):
        if "tool_calls" in value and not _is_message(value):
            return Trace.from_metrics(value, source=source)
        if "messages" in value:
            msgs = value["messages"]
            if not isinstance(msgs, list):
                raise TraceRecordError("'messages' must be a list", source=source)
            return Trace.from_openai_messages(msgs, source=source)
        raise TraceRecordError(
            "object is neither a metrics record (no 'tool_calls') nor a chat log (no 'messages')",
            source=source,
        )
    if isinstance(value, list):
        if value and all(isinstance(m, Mapping) and "role" in m for m in value):
            return Trace.from_openai_messages(value, source=source)
        return Trace.from_records(value, source=source)
    raise TraceRecordError(
        f"expected a JSON object or list, got {type(value).__name__}", source=source
    )


def _is_message(value: Mapping[str, Any]) -> bool:
    return "role" in value


def iter_trace_file(path: str | Path) -> Iterator[LoadedTrace]:
    """Yield every record of a trace file, good or bad, in order.

    ``.jsonl`` files hold one trace per line (line numbers are 1-based). A ``.json``
    file holds one trace, or a list of metrics records (one trace each).
    """
    p = Path(path)
    source = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{source}: cannot read trace file ({exc.strerror or exc})") from None
    if p.suffix == ".jsonl" or (p.suffix != ".json" and _looks_like_jsonl(text)):
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            yield _load_one(line, source, lineno)
        return
    try:
        value = json.loads(text)
    except ValueError as exc:
        err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=1)
        yield LoadedTrace(source, 1, None, err)
        return
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, Mapping) and "tool_calls" in v and "role" not in v for v in value)
    ):
        for index, item in enumerate(value, start=1):
            try:
                trace = Trace.from_metrics(item, source=f"{source}[{index}]")
                yield LoadedTrace(source, index, trace, None)
            except TraceRecordError as exc:
                yield LoadedTrace(source, index, None, _relabel(exc, source, index))
        return
    try:
        yield LoadedTrace(source, 1, trace_from_json(value, source=source), None)
    except TraceRecordError as exc:
        yield LoadedTrace(source, 1, None, _relabel(exc, source, 1))


def _looks_like_jsonl(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines)


def _load_one(line: str, source: str, lineno: int) -> LoadedTrace:
    try:
        value = json.loads(line)
    except ValueError as exc:
        return LoadedTrace(
            source,
            lineno,
            None,
            TraceRecordError(f"invalid JSON: {exc}", source=source, record=lineno),
        )
    try:
        return LoadedTrace(source, lineno, trace_from_json(value, source=source), None)
    except TraceRecordError as exc:
        return LoadedTrace(source, lineno, None, _relabel(exc, source, lineno))


def _relabel(exc: TraceRecordError, source: str, record: int) -> TraceRecordError:
    return TraceRecordError(exc.message, source=source, record=record)


def load_traces(*paths: str | Path) -> list[LoadedTrace]:
    """All records of all files (see :func:`iter_trace_file`)."""
    out: list[LoadedTrace] = []
    for path in paths:
        out.extend(iter_trace_file(path))
    return out
