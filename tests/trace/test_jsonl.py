"""JSON Lines files read a block at a time, from bytes in place, give what reading each
line of the decoded text by itself gives: the same records, traces, codes and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard import load_traces
from agentguard.errors import TraceRecordError
from agentguard.trace import call_records, jsonl
from agentguard.trace.loaded import LoadedTrace, load_value
from tests.trace.test_metrics_lines import _calls, _line, record_identity

_event = st.fixed_dictionaries(
    {"event": st.just("agentguard.decision"), "run_id": st.sampled_from(["r1", "r2"])}
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": st.text("ab", max_size=3)}
)
_value = st.one_of(_line, _line, _line, _event, _message, st.integers(), st.just([1, 2]))
_odd_line = st.one_of(  # lines that send their whole file to the decoded text's lines
    st.just('{"tool_calls": [{"tool_name": "caf\u00e9"}]}'),
    st.just('{"tool_calls": [{"tool_name": "a\u2028b"}]}'),  # a break str.splitlines sees
    st.builds(lambda v: json.dumps(v, ensure_ascii=False), _value),
    st.sampled_from(
        ["\x1f", "\x0c", "\x1c", "\x00{}", '{"tool_calls": [\x0b]}', " \x0b", "\t\x0c "]
    ),
)
_text_line = st.one_of(
    st.builds(json.dumps, _value),
    st.builds(json.dumps, _value),
    st.just("{broken"),
    st.just(""),
    st.just("  \t"),
    st.just(' {"tool_calls": []}'),  # a leading space on a line that is not blank
    st.just('{"tool_calls": [{"tool_name": "a", "arguments": {"id": 12345678901234567890123}}]}'),
    st.just('{"tool_calls": [{"tool_name": "a", "arguments": {"x": NaN}}]}'),
    st.just("[" * 3000 + "]" * 3000),  # nested too deeply
    _odd_line,
)
_newline = st.sampled_from(["\n"] * 8 + ["\r\n", "\r"])


def _file_text(lines: list[str], ends: list[str]) -> str:
    return "".join(line + end for line, end in zip(lines, ends, strict=False))


def _each_alone(text: str, source: str, format: str | None) -> list[LoadedTrace]:
    """Each non-blank line of ``text`` read by itself: parsed by json, then detected,
    parsed and validated as one record (what a file of per-line traces gives)."""
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line or line.isspace():
            continue
        try:
            value = json.loads(line)
        except RecursionError:
            err = TraceRecordError("JSON nested too deeply to read", source=source, record=lineno)
            out.append(LoadedTrace(source, lineno, None, err))
            continue
        except ValueError as exc:
            err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=lineno)
            out.append(LoadedTrace(source, lineno, None, err))
            continue
        out.append(load_value(value, source, lineno, format, True))
    return out


def _same(got: list[LoadedTrace], want: list[LoadedTrace]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert record_identity(a) == record_identity(b)
        assert str(a.error) == str(b.error)
        assert a.trace == b.trace
        if a.trace is not None and b.trace is not None:
            assert a.trace.names == b.trace.names and a.trace.metrics == b.trace.metrics
            codes_a, codes_b = a.trace.tool_codes, b.trace.tool_codes
            assert codes_a is not None and codes_b is not None
            assert codes_a.codes.tolist() == codes_b.codes.tolist()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_text_line, max_size=12),
    st.lists(_newline, max_size=12),
    st.sampled_from([False, False, False, True]),
)
def test_bytes_read_in_place_equal_the_decoded_text(
    lines: list[str], ends: list[str], bom: bool
) -> None:
    """A file's bytes give the records its decoded text gives: same lines, numbers,
    values and errors, whatever its line breaks, blanks and characters."""
    text = _file_text(lines, ends)
    raw = ("\ufeff" if bom else "").encode() + text.encode()
    for format in (None, "metrics"):
        got = jsonl.read_jsonl(raw, "f.jsonl", format, True)
        _same(got, jsonl.read_jsonl(text, "f.jsonl", format, True))


@pytest.mark.parametrize(
    "odd", [" \x0b ", "\t\x0c", "\x1c", " \x1f ", '{"tool_calls": [\x1d]}', "[" * 3000 + "\x0b"]
)
def test_a_break_only_the_text_sees_is_found_where_it_is(odd: str) -> None:
    """A line break that ``str.splitlines`` sees and the newline split does not, in a
    blank line or one that is not JSON, after lines already read, numbers the records as
    the decoded text does (the bytes are read again as that text)."""
    good = '{"tool_calls": [{"tool_name": "a", "arguments": {"x": 1}}]}'
    text = f"{good}\n{odd}\n{good}\n"
    got = jsonl.read_jsonl(text.encode(), "f.jsonl", None, True)
    want = jsonl.read_jsonl(text, "f.jsonl", None, True)
    _same(got, want)
    assert [r.record for r in got] == [r.record for r in _each_alone(text, "f.jsonl", None)]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(_line, _line, st.just("{broken"), st.just("")), max_size=14))
def test_blocks_and_chunks_equal_each_line_alone(tmp_path: Path, lines: list[Any]) -> None:
    """Read in blocks of a few records and chunks of fewer, a file of per-line traces
    gives, line for line, what each line read alone gives (errors included)."""
    path = tmp_path / "runs.jsonl"
    text = "".join((v if isinstance(v, str) else json.dumps(v)) + "\n" for v in lines)
    path.write_text(text)
    with (
        mock.patch.object(jsonl, "BLOCK_RECORDS", 5),
        mock.patch.object(call_records, "CHUNK_RECORDS", 3),
    ):
        for format in (None, "metrics"):
            _same(
                load_traces(path, format=format, messages=True),
                _each_alone(text, str(path), format),
            )


@settings(max_examples=100, deadline=None)
@given(_calls, st.integers(1, 40))
def test_the_final_answers_of_a_chunk_are_counted_per_trace(calls: list[Any], n: int) -> None:
    """``num_tool_calls`` counted for a whole chunk equals each trace's own count."""
    lines = [(i, {"tool_calls": calls[: i % (len(calls) + 1)]}) for i in range(1, n + 1)]
    got = jsonl._metrics_traces(lines, None)
    for lineno, value in lines:
        if lineno in got:
            alone = load_value(value, "<t>", lineno, None, True).trace
            assert alone is not None
            assert got[lineno].metrics == alone.metrics


def test_a_decision_log_after_a_broken_first_line_is_still_a_log(tmp_path: Path) -> None:
    """The first line that parses decides the shape: a decision log whose first line is
    broken is still read run by run, and the broken line is named."""
    fixture = Path(__file__).parent / "fixtures" / "agentguard_decisions.jsonl"
    path = tmp_path / "log.jsonl"
    path.write_text("{broken\n" + fixture.read_text())
    want = load_traces(fixture)
    got = load_traces(path)
    assert got[0].record == 1 and got[0].error is not None
    assert "1: invalid JSON" in str(got[0].error)
    assert [(r.record - 1, r.format, r.trace) for r in got[1:]] == [
        (r.record, r.format, r.trace) for r in want
    ]


def test_a_conversation_written_a_message_per_line_is_one_trace(tmp_path: Path) -> None:
    """Lines that are no format alone but make a conversation together stay one trace."""
    path = tmp_path / "chat.jsonl"
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "a", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": "ok"},
    ]
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    (only,) = load_traces(path)
    assert only.record == 1 and only.trace is not None and only.trace.names == ("a",)
