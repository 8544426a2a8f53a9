"""Read traces from files and JSON values, in any supported format (see
:mod:`agentguard.trace.formats`).

Loading many records never stops at the first bad one: each record yields either
a :class:`Trace` or the :class:`TraceRecordError` that names its file and line
(JSON Lines) or item (a JSON list), and lists the formats tried when none fits.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from agentguard.errors import TraceError, TraceRecordError
from agentguard.trace.formats import OBJECT_FORMATS, detect_format, fits, parse
from agentguard.trace.gzipped import Gunzipped, gunzip
from agentguard.trace.json_text import collector_paused, file_text, json_reader
from agentguard.trace.jsonl import read_jsonl, text_lines
from agentguard.trace.loaded import LoadedTrace as LoadedTrace
from agentguard.trace.loaded import load_value, too_deep
from agentguard.trace.model import Trace

_OBJECT_FORMAT_NAMES = frozenset(f.name for f in OBJECT_FORMATS)


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
    yield from _file(path, format, final_answer, messages)


def _file(
    path: str | Path, format: str | None, final_answer: bool, messages: bool
) -> list[LoadedTrace]:
    p = Path(path)
    source = str(p)
    read = _read(p, source)
    with collector_paused():  # JSON trees hold no cycles (agentguard/trace/json_text.py)
        if read.broken is None:
            records = _file_records(read.data, p, source, format, final_answer)
        elif Path(p.stem).suffix == ".jsonl" or (
            Path(p.stem).suffix != ".json" and _looks_like_jsonl(file_text(read.data, source))
        ):
            records = _cut_lines(read, p, source, format, final_answer)
        else:
            err = TraceRecordError(f"{read.broken}: not scored", source=source, record=1)
            records = [LoadedTrace(source, 1, None, err)]
        if messages:
            return records
        return [_without_messages(r) for r in records]


def _without_messages(rec: LoadedTrace) -> LoadedTrace:
    trace = rec.trace
    if trace is None or not trace.has_messages:
        return rec
    return replace(rec, trace=trace.without_messages())


def _file_records(
    raw: bytes, p: Path, source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    suffix = Path(p.stem).suffix if p.suffix == ".gz" else p.suffix
    if suffix == ".jsonl":
        return read_jsonl(raw, source, format, final_answer)  # decoded there if need be
    text = file_text(raw, source)
    if suffix != ".json" and _looks_like_jsonl(text):
        return read_jsonl(text, source, format, final_answer)
    try:
        value = json_reader(text)(text)
    except RecursionError:
        return [LoadedTrace(source, 1, None, too_deep(source, 1))]
    except ValueError as exc:
        if _looks_like_jsonl(text):  # JSON lines saved under a .json name
            return read_jsonl(text, source, format, final_answer)
        err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=1)
        return [LoadedTrace(source, 1, None, err)]
    samples = _samples(value)
    if samples is not None:
        return [
            load_value(item, source, i, format, final_answer) for i, item in enumerate(samples, 1)
        ]
    if _is_collection(value, format):
        return [
            load_value(item, source, i, format, final_answer) for i, item in enumerate(value, 1)
        ]
    return [load_value(value, source, 1, format, final_answer)]


def _read(path: Path, source: str) -> Gunzipped:
    """The file's bytes, gunzipped when it ends in ``.gz`` (as far as the stream goes:
    :mod:`~agentguard.trace.gzipped`), decoded as UTF-8, with or without a BOM, by
    :func:`~agentguard.trace.json_text.file_text`.

    Only regular files: a FIFO would block and a device (``/dev/zero``) never end.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise TraceError(f"{source}: not a regular file (a device, FIFO or folder)")
        raw = path.read_bytes()
    except OSError as exc:
        raise TraceError(f"{source}: cannot read trace file ({exc.strerror or exc})") from None
    return gunzip(raw) if path.suffix == ".gz" else Gunzipped(raw)


def _cut_lines(
    read: Gunzipped, p: Path, source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    """The records of a JSON Lines file whose gzip stream breaks: every line before the
    break read as ever, and an error at the line where it breaks (the incomplete line,
    or the next), so a run or a trace the break cut into is not scored as if whole."""
    data = read.data
    if data and not data.endswith(b"\n"):
        data += b"\n"  # the incomplete last line stays a line of its own (broken JSON)
    at = data.count(b"\n") + 1
    records = _file_records(data + _BREAK_LINE, p, source, format, final_answer)
    err = TraceRecordError(
        f"{read.broken}: the lines from here on are missing", source=source, record=at
    )
    return [replace(r, error=err) if r.record == at and r.trace is None else r for r in records]


_BREAK_LINE: Final = b"(the gzip stream breaks here)\n"
"""A line that is no JSON, put where the stream breaks: the JSON Lines reader then
treats the break as it treats any broken line (a run open there is not scored)."""


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


def _looks_like_jsonl(text: str) -> bool:
    lines = [ln for _, ln in text_lines(text)]
    return len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines)


def load_traces(
    *paths: str | Path,
    format: str | None = None,
    final_answer: bool = True,
    messages: bool = False,
) -> list[LoadedTrace]:
    """All records of all files (see :func:`iter_trace_file`)."""
    out: list[LoadedTrace] = []
    for path in paths:
        out += _file(path, format, final_answer, messages)
    return out
