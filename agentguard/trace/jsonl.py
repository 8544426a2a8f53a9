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

The lines are those of JSON Lines: the file split at each newline (LF; a CR before it
is JSON space), numbered from 1, a line of only spaces, tabs and CRs being blank. Not
``str.splitlines``: it also breaks at U+2028, U+2029, U+0085 and five ASCII controls,
which a JSON string may hold unescaped (the decision log writes a tool's text as it is),
so a result holding one made the run's log unreadable. A file's bytes are split at their
newlines and each line parsed in place (a ``memoryview``), UTF-8 or ASCII alike (a
newline byte is never part of a UTF-8 sequence): nothing is decoded or copied first, and
a line that is not UTF-8 is an error naming that line, the others read as ever. A UTF-8
byte-order mark before the first line is skipped.

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
from agentguard.trace.json_text import JsonText, json_reader
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
    return _read_lines(data, source, format, final_answer)


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
    """The lines that are not blank, parsed (1-based numbers: lines end at each newline)."""
    loads = json_reader(data)
    numbered: Iterator[tuple[int, JsonText]] = (
        _byte_lines(data) if isinstance(data, bytes) else text_lines(data)
    )
    for lineno, line in numbered:
        try:
            yield lineno, loads(line)
        except RecursionError:
            yield lineno, LoadedTrace(source, lineno, None, too_deep(source, lineno))
        except UnicodeDecodeError as exc:
            err = TraceRecordError(
                f"not UTF-8 text: {exc.reason} at byte {exc.start + 1} of the line",
                source=source,
                record=lineno,
            )
            yield lineno, LoadedTrace(source, lineno, None, err)
        except ValueError as exc:
            err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=lineno)
            yield lineno, LoadedTrace(source, lineno, None, err)


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines of a JSON Lines text that are not blank, numbered from 1: split at each
    newline only, after a byte-order mark (see the module docstring). Every reader of
    JSON Lines text splits so, so line numbers agree across the project."""
    for n, line in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        if line.strip(_BLANK_TEXT):
            yield n, line


_BLANK_TEXT: Final = " \t\r"
"""What a blank line may hold: JSON's spaces other than the newline."""
_BLANK: Final = _BLANK_TEXT.encode()
_BOM: Final = "\ufeff".encode()


def _byte_lines(raw: bytes) -> Iterator[tuple[int, memoryview]]:
    """The lines of ``raw`` that are not blank, read in place (no copy of each line),
    after a UTF-8 byte-order mark if it starts with one."""
    view = memoryview(raw)
    find = raw.find
    size = len(raw)
    start = len(_BOM) if raw.startswith(_BOM) else 0
    lineno = 0
    while start < size:
        lineno += 1
        end = find(b"\n", start)
        if end < 0:
            end = size
        if end > start and (raw[start] not in _SPACES or raw[start:end].strip(_BLANK)):
            yield lineno, view[start:end]
        start = end + 1


_SPACES: Final = frozenset(_BLANK)
"""The bytes a blank line can start with."""


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


__all__ = ["BLOCK_RECORDS", "read_jsonl", "text_lines"]
