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
_odd_line = st.one_of(  # non-ASCII text, and controls str.splitlines breaks at
    st.just('{"tool_calls": [{"tool_name": "caf\u00e9"}]}'),
    st.just('{"tool_calls": [{"tool_name": "a\u2028b"}]}'),  # no JSON Lines break
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
    for lineno, line in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        if not line.strip(" \t\r"):
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


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85"])
def test_a_break_str_splitlines_sees_is_text_in_a_line(odd: str, tmp_path: Path) -> None:
    """U+2028, U+2029 and U+0085, which ``str.splitlines`` breaks at, are text inside a
    JSON string (the log writes them unescaped): the line holding one is one record (was:
    a run's log with such a result could not be read)."""
    good = '{"tool_calls": [{"tool_name": "a", "arguments": {"x": 1}}]}'
    odd_line = json.dumps(
        {"tool_calls": [{"tool_name": "a", "tool_result": f"p{odd}q"}]}, ensure_ascii=False
    )
    assert odd in odd_line
    path = tmp_path / "f.jsonl"
    path.write_text(f"{good}\n{odd_line}\n{good}\n", encoding="utf-8")
    got = load_traces(path)
    assert [r.record for r in got] == [1, 2, 3] and all(r.trace is not None for r in got)
    assert got[1].trace is not None and got[1].trace.calls[0].result == f"p{odd}q"


@pytest.mark.parametrize("odd", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f"])
def test_a_control_str_splitlines_breaks_at_is_one_bad_line(odd: str, tmp_path: Path) -> None:
    """A raw control character (no JSON text holds one) makes its own line an error at
    its newline-counted number; the lines around it read as ever."""
    good = '{"tool_calls": [{"tool_name": "a"}]}'
    path = tmp_path / "f.jsonl"
    path.write_text(f'{good}\n{{"tool_calls": [{odd}]}}\n{good}\n', encoding="utf-8")
    got = load_traces(path)
    assert [r.record for r in got] == [1, 2, 3]
    assert got[0].trace is not None and got[2].trace is not None and got[1].trace is None


def test_a_line_that_is_not_utf8_is_an_error_naming_it_and_the_others_read(
    tmp_path: Path,
) -> None:
    """One bad byte in line 2 of 3: line 2 is an error naming it, lines 1 and 3 are traces
    (was: the whole file could not be decoded, and no record was scored)."""
    good = b'{"tool_calls": [{"tool_name": "caf\xc3\xa9"}]}'
    path = tmp_path / "f.jsonl"
    path.write_bytes(good + b"\n" + b'{"tool_calls": [{"tool_name": "x\xe9"}]}\n' + good + b"\n")
    got = load_traces(path)
    assert [r.record for r in got] == [1, 2, 3]
    assert got[0].trace is not None and got[0].trace.names == ("caf\u00e9",)
    assert got[2].trace is not None
    assert got[1].trace is None and "not UTF-8" in str(got[1].error) and ":2:" in str(got[1].error)


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


# ---------------------------------------------------------------- traces with a hole
def _logged_run(path: Path, run_id: str, calls: int, *, finish: bool = True) -> None:
    """A real firewall's decision log of ``calls`` allowed calls, appended to ``path``."""
    from agentguard import parse_spec
    from agentguard.enforcement.firewall import Firewall

    spec = parse_spec("constraint c := G(issue_refund -> O lookup_order)")
    firewall = Firewall(spec, run_id=run_id, log_path=path)
    for i in range(calls):
        decision = firewall.start(firewall.propose("lookup_order", {"order_id": f"A{i}"}))
        firewall.complete(decision, {"ok": i})
    if finish:
        firewall.finish()


def _by_run(loaded: list[Any]) -> dict[Any, Any]:
    return {r.trace.metrics.get("run_id") if r.trace is not None else r.record: r for r in loaded}


def test_a_record_per_line_file_with_a_broken_line_is_not_scored(tmp_path: Path) -> None:
    """A file that is one trace, a call record per line, is not scored without a line it
    cannot read (the call that line held would be missing); the broken line is named."""
    path = tmp_path / "calls.jsonl"
    records = [
        {"tool_name": "verify_identity", "arguments": {}},
        {"tool_name": "issue_refund", "arguments": {"amount": 900}},
        {"tool_name": "final_answer", "arguments": {"answer": "done"}},
    ]
    whole = "".join(json.dumps(r) + "\n" for r in records)
    path.write_text(whole)
    (ok,) = load_traces(path)
    assert ok.trace is not None and len(ok.trace.names) == 3
    lines = whole.splitlines()
    path.write_text("\n".join([lines[0], lines[1][:20], lines[2]]) + "\n")
    got = load_traces(path)
    assert [r.trace for r in got] == [None, None]
    assert "invalid JSON" in str(got[1].error) and got[1].record == 2
    assert got[0].record == 1
    assert "not scored" in str(got[0].error) and "line 2 cannot be read" in str(got[0].error)


def test_a_run_with_a_broken_line_is_not_scored_and_the_others_are(tmp_path: Path) -> None:
    """In a decision log of two runs, a broken line of the second makes that run an
    error naming the line; the first run, finished before it, is still scored."""
    path = tmp_path / "log.jsonl"
    _logged_run(path, "first", 2)
    _logged_run(path, "second", 3)
    want = {r.record: r.trace for r in load_traces(path)}
    lines = path.read_text().splitlines()
    second = [i for i, line in enumerate(lines) if '"second"' in line]
    broken = second[2]
    lines[broken] = lines[broken][:30]
    path.write_text("\n".join(lines) + "\n")
    got = load_traces(path)
    first_run = next(r for r in got if r.record == 1)
    assert first_run.trace == want[1]
    second_run = next(r for r in got if r.record == second[0] + 1)
    assert second_run.trace is None
    assert f"line {broken + 1} cannot be read, and run second's numbering skips" in str(
        second_run.error
    )
    assert "run second" in str(second_run.error)


def test_a_line_removed_from_a_run_is_found_by_its_numbering(tmp_path: Path) -> None:
    """A decision log line removed (a gap in the run's ``seq``) makes that run an error
    naming where; the other run is scored as before."""
    path = tmp_path / "log.jsonl"
    _logged_run(path, "first", 3)
    _logged_run(path, "second", 2)
    want = {r.record: r.trace for r in load_traces(path)}
    lines = path.read_text().splitlines()
    del lines[2]  # a line of the first run
    path.write_text("\n".join(lines) + "\n")
    got = load_traces(path)
    assert got[0].trace is None and "missing lines before line 3" in str(got[0].error)
    later = [r for r in got if r.record > 1]
    assert [r.trace for r in later] == [want[r.record + 1] for r in later]


def test_a_broken_line_between_two_finished_runs_hides_nothing(tmp_path: Path) -> None:
    """A broken line after one run's finish and before the next run begins can be no
    line of either (their numbering is whole): both are scored."""
    path = tmp_path / "log.jsonl"
    _logged_run(path, "first", 2)
    with path.open("a") as fh:
        fh.write("{broken\n")
    _logged_run(path, "second", 2)
    got = load_traces(path)
    assert [r.error is None for r in got] == [True, False, True]


def test_interleaved_runs_blame_the_run_whose_numbering_has_the_gap(tmp_path: Path) -> None:
    """Two runs interleaved line by line, one line of the first broken: the first run's
    numbering skips it, the second's is whole up to its finish, so only the first is an
    error."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _logged_run(a, "first", 2)
    _logged_run(b, "second", 2)
    la, lb = a.read_text().splitlines(), b.read_text().splitlines()
    la[1] = "{broken"
    mixed = [line for pair in zip(la, lb, strict=True) for line in pair]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(mixed) + "\n")
    got = {r.record: r for r in load_traces(path)}  # each run by its first line
    assert got[1].trace is None and "run first's numbering skips" in str(got[1].error)
    assert got[2].error is None and got[2].trace is not None


def test_a_truncated_last_line_of_an_unfinished_run_is_named(tmp_path: Path) -> None:
    """A run killed while writing its last line: the half line may be its result, so the
    run is not scored as if that call had not run; the error names the line."""
    path = tmp_path / "log.jsonl"
    _logged_run(path, "killed", 2, finish=False)
    text = path.read_text()
    path.write_text(text[: len(text) - 40])
    got = load_traces(path)
    assert got[0].trace is None and "cannot be read and may be a line of run killed" in str(
        got[0].error
    )
