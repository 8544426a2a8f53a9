"""JSON Lines trace files: a trace per line, or one of two whole-file shapes (an
agentguard decision log, one conversation written a message per line).

The first line that parses decides. A decision-log event, or an object that is no
format by itself, may begin a whole-file shape: the whole file is parsed, then read as
one (or, when it is not one after all, line by line). Any other first line means every
line is a trace by itself, and the lines are read a block at a time as they are parsed:
a block's metrics records (the paper's shape, most of a corpus) have their call records
read together (:func:`~agentguard.trace.call_records.read_call_record_lists`) while the
objects just parsed are still in the processor's cache (read after the whole file was
parsed, they took about a sixth longer, fetched back from memory).

The lines are those ``str.splitlines`` gives the decoded text, numbered from 1. A file
of ASCII bytes whose only line break is the newline is split at its newlines and each
line parsed in place (a ``memoryview``): its text is its bytes, so nothing is decoded,
copied or encoded again for the digit scan of :func:`json_reader`. Any other file is
decoded and split as text. Of the other line breaks, only the two a JSON line may hold
(CR, NUL) are looked for before reading; the rest can only be in a line that is not JSON
or a blank one, so they are looked for there, and if there the file is read again as
text (rare: such files are broken).

Either way each line gives what reading it alone gives (a property test holds the two
equal), and a line that is not JSON is an error naming its line, the others read as ever.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.call_records import CHUNK_RECORDS, read_call_record_lists
from agentguard.trace.formats import detect_format
from agentguard.trace.formats.agentguard_logs import FINISH_EVENT, events_trace, is_event
from agentguard.trace.formats.records import detect_metrics
from agentguard.trace.json_text import JsonText, file_text, is_ascii, json_reader
from agentguard.trace.loaded import LoadedTrace, load_value, loaded_each, relabel, too_deep
from agentguard.trace.model import Trace

_Line = tuple[int, Any]
"""A line's number and its value, or the record of its error when it is not JSON."""

BLOCK_RECORDS: Final = CHUNK_RECORDS
"""Lines are read a block at a time once a block holds this many call records."""


def read_jsonl(
    data: bytes | str, source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    """Every record of a JSON Lines file's bytes or text, in order (see the module
    docstring)."""
    if type(data) is bytes and _may_split_alike(data):
        try:
            return _read_lines(data, source, format, final_answer)
        except _SplitsOtherwise:  # (a rare file: its text's lines are read instead)
            pass
    text = data if isinstance(data, str) else file_text(data, source)
    return _read_lines(text, source, format, final_answer)


def _read_lines(
    data: bytes | str, source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    lines = _parsed_lines(data, source)
    block: list[_Line] = []
    for line in lines:
        block.append(line)
        if type(line[1]) is not LoadedTrace:
            break
    if block and _may_be_whole(block[-1][1], format):
        return _whole_file([*block, *lines], source, format, final_answer)
    out: list[LoadedTrace] = []
    size = 0
    for line in lines:
        block.append(line)
        value = line[1]
        calls = value.get("tool_calls") if type(value) is dict else None
        size += len(calls) if type(calls) is list else 1
        if size >= BLOCK_RECORDS:
            out += _each_line(block, source, format, final_answer)
            block, size = [], 0
    out += _each_line(block, source, format, final_answer)
    return out


def _parsed_lines(data: bytes | str, source: str) -> Iterator[_Line]:
    """The lines that are not blank, parsed (1-based numbers, as ``str.splitlines``
    counts the lines of the text); bytes are those :func:`_may_split_alike` passed, and
    raise :class:`_SplitsOtherwise` at a line that shows they do not split alike."""
    loads = json_reader(data)
    numbered: Iterator[tuple[int, JsonText]]
    if isinstance(data, bytes):
        numbered = _byte_lines(data)
    else:
        numbered = (
            (n, line)
            for n, line in enumerate(data.splitlines(), start=1)
            if line and not line.isspace()
        )
    for lineno, line in numbered:
        try:
            yield lineno, loads(line)
        except RecursionError:
            _check_alike(data)
            yield lineno, LoadedTrace(source, lineno, None, too_deep(source, lineno))
        except ValueError as exc:
            _check_alike(data)
            err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=lineno)
            yield lineno, LoadedTrace(source, lineno, None, err)


class _SplitsOtherwise(Exception):
    """The bytes being read do not split into their text's lines at each newline."""


_OTHER_BREAKS: Final = tuple(bytes([b]) for b in b"\r\x0b\x0c\x1c\x1d\x1e\x1f\x00")
"""ASCII bytes that ``str.splitlines`` breaks a line at (or ``str.isspace`` counts as
space) other than the newline, and NUL (after which ``json`` would guess UTF-16)."""

_FIRST_LOOK: Final = (b"\r", b"\x00")
"""Of those, the two a line that parses may hold (a carriage return is JSON space, and
``json`` reads bytes holding a NUL as UTF-16 or UTF-32). Any other is in a line that is
not JSON (outside a string it is no JSON space, inside one a control character JSON
forbids) or in one of only spaces, so it is looked for at such a line alone."""


def _may_split_alike(raw: bytes) -> bool:
    """Whether ``raw`` may split into its text's lines at each newline: ASCII (whose
    decoding is itself) without the breaks of :data:`_FIRST_LOOK`; the others are
    looked for when a line shows one may be there (:func:`_check_alike`)."""
    return is_ascii(raw) and not any(b in raw for b in _FIRST_LOOK)


def _splits_alike(raw: bytes) -> bool:
    """Whether the lines of ``raw`` are those of its text at each newline: ASCII, whose
    decoding is itself, with no other line break (each looked for by ``memchr``)."""
    return is_ascii(raw) and not any(b in raw for b in _OTHER_BREAKS)


def _check_alike(data: bytes | str) -> None:
    """At a line that is not JSON: raise :class:`_SplitsOtherwise` when ``data``, bytes,
    holds another line break after all (then the line may be more than one)."""
    if type(data) is bytes and not _splits_alike(data):
        raise _SplitsOtherwise


def _byte_lines(raw: bytes) -> Iterator[tuple[int, memoryview]]:
    """The lines of ``raw`` that are not blank, read in place (no copy of each line);
    a blank line holding a space other than a space or tab (a vertical tab or form
    feed: line breaks to ``str.splitlines``) raises :class:`_SplitsOtherwise`."""
    view = memoryview(raw)
    find = raw.find
    size = len(raw)
    start = lineno = 0
    while start < size:
        lineno += 1
        end = find(b"\n", start)
        if end < 0:
            end = size
        if end > start:
            if raw[start] not in _SPACES or not raw[start:end].isspace():
                yield lineno, view[start:end]
            elif raw[start:end].strip(b" \t"):
                raise _SplitsOtherwise
        start = end + 1


_SPACES: Final = frozenset(b" \t")
"""The bytes a blank line of such text can start with."""


def _may_be_whole(first: Any, format: str | None) -> bool:
    """Whether a file whose first JSON line is ``first`` may be one whole-file shape."""
    if type(first) is LoadedTrace:
        return False  # no line is JSON: each is its own error
    if format is not None:
        return format == "agentguard-log"
    return is_event(first) or (isinstance(first, Mapping) and detect_format(first) is None)


def _whole_file(
    lines: list[_Line], source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    good = [(n, v) for n, v in lines if type(v) is not LoadedTrace]
    bad: list[LoadedTrace] = [v for _, v in lines if type(v) is LoadedTrace]
    if format == "agentguard-log" or (
        format is None and good and all(is_event(v) for _, v in good)
    ):
        return _sorted([*bad, *_decision_log(good, source, [b.record for b in bad])])
    values = [v for _, v in good]
    if (
        format is None
        and good
        and all(isinstance(v, Mapping) and detect_format(v) is None for v in values)
        and detect_format(values) is not None
    ):
        first = good[0][0]
        if bad:  # the file is one trace: read without its broken lines it would have a hole
            err = TraceRecordError(
                f"not scored: this file is one trace written a record per line, and "
                f"{_lines_named([b.record for b in bad])} cannot be read, so the trace "
                "would be scored with what those lines held missing",
                source=source,
                record=first,
            )
            return _sorted([*bad, LoadedTrace(source, first, None, err)])
        return _sorted([*bad, load_value(values, source, first, None, final_answer)])
    return _each_line(lines, source, format, final_answer)


def _lines_named(numbers: list[int]) -> str:
    """``line 4`` / ``lines 4, 9 and 12`` (the first few of many)."""
    if len(numbers) == 1:
        return f"line {numbers[0]}"
    shown = ", ".join(map(str, numbers[:5]))
    more = f" and {len(numbers) - 5} more" if len(numbers) > 5 else ""
    return f"lines {shown}{more}"


def _each_line(
    lines: list[_Line], source: str, format: str | None, final_answer: bool
) -> list[LoadedTrace]:
    """Each line read as a trace by itself; the metrics records among them together."""
    traces = _metrics_traces(lines, format)
    read = loaded_each(traces, source, "metrics")
    if len(read) == len(lines):  # every line (in order: so are the traces)
        return read
    records = dict(zip(traces, read, strict=True))
    return [
        value
        if type(value) is LoadedTrace
        else records[lineno]
        if lineno in records
        else load_value(value, source, lineno, format, final_answer)
        for lineno, value in lines
    ]


def _metrics_traces(lines: list[_Line], format: str | None) -> dict[int, Trace]:
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
    columns = read_call_record_lists([v["tool_calls"] for _, v in picked], json_rows=True)
    traces = Trace.from_read_column_lists(columns, [v for _, v in picked])
    return {
        lineno: trace
        for (lineno, _), trace in zip(picked, traces, strict=True)
        if trace is not None
    }


def _decision_log(
    lines: list[tuple[int, Any]], source: str, broken: list[int]
) -> list[LoadedTrace]:
    """The trace of each run of a decision log, or the error of a run with a hole: lines
    its chain says are missing, or a broken line (``broken``) that may be its own."""
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
        hole = _run_hole(events, broken)
        if hole is not None:
            err = TraceRecordError(f"not scored: {hole}", source=source, record=first)
            out.append(LoadedTrace(source, first, None, err))
            continue
        try:
            trace = events_trace([e for _, e in events], source)
            out.append(LoadedTrace(source, first, trace, None, "agentguard-log"))
        except TraceRecordError as exc:
            out.append(LoadedTrace(source, first, None, relabel(exc, source, first)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            err = TraceRecordError(
                f"malformed decision log: {type(exc).__name__}: {exc}", source=source, record=first
            )
            out.append(LoadedTrace(source, first, None, err))
    return out


def _run_hole(events: list[tuple[int, Mapping[str, Any]]], broken: list[int]) -> str | None:
    """Why one run's lines do not hold the whole run, or None.

    The firewall numbers each run's lines (``seq``, 0 up; a run restored from a saved
    state starts again at 0): a number skipped is a line removed. A broken line may be
    the run's own when the run was open there (begun before it, not finished before it),
    unless the numbering shows every line up to the run's finish, after it, is present.
    Scoring the run without such a line would judge a trace with a call missing.
    """
    seqs = [e.get("seq") for _, e in events]
    numbered = all(type(q) is int for q in seqs)
    run = events[0][1].get("run_id")
    if numbered:
        for (before, _), (line, _), prev, seq in zip(
            events, events[1:], seqs, seqs[1:], strict=False
        ):
            if seq != prev + 1 and seq != 0:  # type: ignore[operator]
                between = [b for b in broken if before < b < line]
                if between:
                    return (
                        f"{_lines_named(between)} cannot be read, and run {run}'s numbering "
                        f"skips a line there (seq {seq} follows seq {prev}): the run would "
                        "be scored with it missing"
                    )
                return (
                    f"run {run} is missing lines before line {line} "
                    f"(seq {seq} follows seq {prev}): removed, or the file was edited "
                    "(`agentguard audit verify` checks the whole chain)"
                )
    if not broken:
        return None
    first = events[0][0]
    ends = [n for n, e in events if e.get("event") == FINISH_EVENT]
    for b in broken:
        if b < first:
            continue
        finished_after = [n for n in ends if n > b]
        if ends and min(ends) < b and not finished_after:
            continue  # finished before the broken line
        if numbered and finished_after:
            continue  # every line up to a finish after it is here: not this run's
        return (
            f"line {b} cannot be read and may be a line of run {run} (open there), "
            "which would be scored with it missing"
        )
    return None


def _sorted(items: list[LoadedTrace]) -> list[LoadedTrace]:
    return sorted(items, key=lambda r: r.record)


__all__ = ["BLOCK_RECORDS", "read_jsonl"]
