"""Trace files parse with orjson where it reads exactly as json does, with json elsewhere."""

from __future__ import annotations

import gc
import json
import re
import weakref
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import load_traces
from agentguard.trace import json_text
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


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.integers(0, 10**25), st.text("ab ,:/", max_size=12)), max_size=20),
    st.integers(0, 64),
)
def test_long_texts_looked_at_as_an_array_find_the_same_runs(
    parts: list[Any], threshold: int
) -> None:
    """Looked at as an array (a long text's way, any threshold) or by the bytes' own
    methods, a text takes json exactly when it holds a run of 19 digits."""
    raw = "".join(map(str, parts)).encode()
    has_run = any(len(run) >= 19 for run in re.split(rb"[^0-9]", raw))
    with mock.patch.object(json_text, "_ARRAY_FROM", threshold):
        assert (json_reader(raw) is not json_text._loads) == has_run


@pytest.mark.parametrize("line", [*_LINES[:2], '{"a": [1, 2.5, "x"]}', '{"a": 1 "b"}'])
def test_bytes_and_their_lines_in_place_read_as_json_reads_them(line: str) -> None:
    """A reader made for a file's bytes reads a memoryview of one of its lines as json
    reads the line (its errors included)."""
    raw = line.encode()
    read = json_reader(raw)
    try:
        want: Any = json.loads(line)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            read(memoryview(raw))
        return
    assert repr(read(memoryview(raw))) == repr(want)


class _Node:
    """An object that can hold a reference cycle."""

    link: Any = None


def test_what_the_block_built_is_filed_with_the_long_lived_objects() -> None:
    """Objects built in the block move to the oldest generation, past the young passes;
    a young cycle made before the block is collected first, not moved with them."""
    gc.collect()
    before = _Node()
    before.link = before
    gone = weakref.ref(before)
    del before
    with collector_paused():
        built = [_Node() for _ in range(50)]
    assert gone() is None  # collected before the block, not carried into the old generation
    young = {id(o) for g in (0, 1) for o in gc.get_objects(generation=g)}
    assert id(built) not in young and not any(id(n) in young for n in built)
    assert any(o is built for o in gc.get_objects(generation=2))
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_block_that_does_not_promote_leaves_its_objects_young() -> None:
    """``promote=False`` only pauses the collector: what the block built stays young."""
    with collector_paused(promote=False):
        built = [_Node() for _ in range(10)]
    assert gc.isenabled()
    assert not any(o is built for o in gc.get_objects(generation=2))


def test_objects_frozen_by_others_stay_frozen() -> None:
    """When something else froze objects, their frozen set is left as it was."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            built = [_Node() for _ in range(10)]
        assert gc.get_freeze_count() == frozen and gc.isenabled()
        assert not any(o is built for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()
