"""Trace files parse with orjson where it reads exactly as json does, with json elsewhere."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import load_traces
from agentguard.trace.json_text import collector_paused, json_reader

_LINES = [
    '{"tool_calls": [{"tool_name": "a", "arguments": {"id": 123456789012345678901234567890}}]}',
    '{"tool_calls": [{"tool_name": "b", "arguments": {"x": NaN, "y": 1e400}}]}',
    '{"tool_calls": [{"tool_name": "c", "arguments": {"s": "\\ud800"}}]}',
    '{"tool_calls": [{"tool_name": "d", "arguments": {"id": -9223372036854775809}}]}',
]


@pytest.mark.parametrize("line", _LINES)
def test_values_are_those_of_json(line: str) -> None:
    """Big integers, NaN, overflowing floats and lone surrogates read as json reads them."""
    got = json_reader(line)(line)
    want = json.loads(line)
    assert repr(got) == repr(want)


def test_a_short_line_beside_a_long_number_reads_alike(tmp_path: Path) -> None:
    """A file with a 19-digit run is read by json throughout, so ids stay exact integers."""
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(_LINES) + "\n{broken\n")
    loaded = load_traces(path)
    assert [r.record for r in loaded] == [1, 2, 3, 4, 5]
    first = loaded[0].trace
    assert first is not None and first.calls[0].args["id"] == 123456789012345678901234567890
    assert loaded[4].error is not None and "5: invalid JSON: Expecting property name" in str(
        loaded[4].error
    )


def test_invalid_json_keeps_json_s_message() -> None:
    """A line orjson rejects is read again by json, whose error the loader reports."""
    with pytest.raises(json.JSONDecodeError, match="Expecting ',' delimiter"):
        json_reader('{"a": 1 "b"}')('{"a": 1 "b"}')


def test_collector_is_restored() -> None:
    """The garbage collector is paused in the block and restored after, even on error."""
    assert gc.isenabled()
    seen: list[bool] = []

    def fail() -> None:
        with collector_paused():
            seen.append(gc.isenabled())
            raise RuntimeError

    with pytest.raises(RuntimeError):
        fail()
    assert seen == [False]
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 10**25), st.text("ab ,:", max_size=12)), max_size=20))
def test_long_digit_runs_are_found_wherever_they_fall(parts: list[Any]) -> None:
    """A text takes json exactly when it holds a run of 19 digits, at any offset."""
    text = "".join(map(str, parts))
    has_run = any(len(run) >= 19 for run in re.split(r"[^0-9]", text))
    assert (json_reader(text) is json.loads) == has_run
