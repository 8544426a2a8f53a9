"""Call records read a column at a time: the plain path equals the record-by-record one,
calls are built on first use, and a bad record is still named."""

from __future__ import annotations

import json
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Trace, TraceRecordError
from agentguard.trace.call_records import (
    CallColumns,
    _read_each,
    _read_plain,
    read_call_records,
)
from agentguard.trace.json_text import json_reader
from agentguard.trace.model import UNKNOWN, Call
from agentguard.trace.tool_codes import ToolCodes, tool_code

_values = st.one_of(st.integers(-3, 3), st.text("ab{}1", max_size=4), st.none(), st.booleans())
_plain_record = st.fixed_dictionaries(
    {"tool_name": st.sampled_from(["a", "b", "final_answer"])},
    optional={
        "arguments": st.one_of(st.none(), st.dictionaries(st.sampled_from("xy"), _values)),
        "tool_result": st.one_of(
            _values,
            st.lists(_values, max_size=2),
            st.dictionaries(st.sampled_from("xy"), _values, max_size=2),
            st.just({"content": [{"type": "text", "text": '{"ok": true}'}], "isError": True}),
        ),
        "is_error": st.one_of(st.booleans(), st.just("yes")),
    },
)


def _args(columns: CallColumns) -> list[Any]:
    """The arguments each call gets (an absent column or a None entry is ``{}``)."""
    if columns.args is None:
        return [{}] * len(columns.names)
    return [a or {} for a in columns.args]


def _results(columns: CallColumns) -> list[Any]:
    """The results each call gets (an absent column is UNKNOWN throughout)."""
    return [UNKNOWN] * len(columns.names) if columns.results is None else columns.results


@settings(max_examples=300, deadline=None)
@given(st.lists(_plain_record, max_size=8))
def test_plain_path_equals_record_by_record(records: list[dict[str, Any]]) -> None:
    """Canonical records give the same columns on the plain path as read one by one."""
    plain = _read_plain(records)
    assert plain is not None
    each = _read_each(records, "<t>")
    assert plain.names == each.names and _results(plain) == _results(each)
    assert _args(plain) == _args(each)
    assert plain.error_positions() == each.error_positions() and plain.kinds == each.kinds
    assert plain.tools is not None and each.tools is not None
    assert plain.tools.codes.tolist() == each.tools.codes.tolist()
    assert plain.tool_call_count() == each.tool_call_count()


@settings(max_examples=200, deadline=None)
@given(st.lists(_plain_record, max_size=8))
def test_built_calls_equal_eager_calls(records: list[dict[str, Any]]) -> None:
    """A trace's lazily built calls equal calls built from each record directly."""
    trace = Trace.from_records(records)
    each = _read_each(records, "<t>")
    expected = tuple(
        Call(n, a, r, i, each.errors[i] if each.errors else False)
        for i, (n, a, r) in enumerate(zip(each.names, each.args, each.results, strict=True))
    )
    assert trace.calls == expected
    assert pickle.loads(pickle.dumps(trace)) == trace
    assert Trace(trace.calls, trace.metrics) == trace


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"tool_name": "a"}, ["not", "an", "object"]], "tool call 1 must be an object"),
        ([{"tool_name": "a"}, {"tool_name": ""}], "tool call 1 has no 'tool_name'"),
        ([{"tool_name": "a"}, {"tool_name": 3}], "tool call 1 has no 'tool_name'"),
        ([{"tool_name": "a", "arguments": "{bad"}], "record 0: arguments are not valid JSON"),
        ([{"tool_name": "a", "arguments": [1]}], "record 0: arguments must be an object"),
        ([{"tool_name": "a", "kind": "user"}], "tool call 0: kind 'user' does not fit"),
    ],
)
def test_bad_records_are_named(records: list[Any], message: str) -> None:
    """A record the plain path cannot read is read one by one, and its error names it."""
    with pytest.raises(TraceRecordError, match=message):
        read_call_records(records, "<t>")


def test_other_spellings_and_dialogue_records_are_read() -> None:
    """Records spelled otherwise, and dialogue events, go the record-by-record way."""
    trace = Trace.from_records(
        [
            {"name": "a", "args": '{"x": 1}', "output": "2", "status": "error"},
            {"tool_name": "user_message", "arguments": {"text": "hi"}},
        ]
    )
    assert trace.calls[0] == Call("a", {"x": 1}, 2, 0, True)
    assert trace.has_messages and trace.calls[1].kind == "user"
    assert trace.metrics["tool_errors"] == [0] and trace.metrics["num_tool_calls"] == 1


def test_arguments_are_copied_when_calls_are_built() -> None:
    """A call's arguments are its own dict, not the record's."""
    args = {"x": 1}
    trace = Trace.from_records([{"tool_name": "a", "arguments": args}])
    assert trace.calls[0].args == args and trace.calls[0].args is not args
    with pytest.raises(AttributeError):
        trace.metrics = {}  # type: ignore[misc]


def test_calls_built_from_columns_equal_calls_built_one_by_one() -> None:
    """A result given as JSON text is decoded when calls are built from columns too."""
    trace = Trace.from_records(
        [{"tool_name": "a", "arguments": None, "tool_result": '{"x": 1}'}, {"tool_name": "b"}]
    )
    assert trace.calls == (Call("a", {}, {"x": 1}, 0), Call("b", {}, position=1))


_name = st.one_of(
    st.sampled_from(["a", "b", "final_answer", "", "user_message", "assistant_message"]),
    st.text("xyz", min_size=1, max_size=3),  # names the code table may not hold yet
    st.integers(0, 2),
    st.just(["a"]),
)
_json_row = st.one_of(  # what a JSON parser gives for a call record, plain or not
    _plain_record,
    _plain_record,
    st.fixed_dictionaries(
        {"tool_name": _name},
        optional={
            "arguments": st.one_of(st.none(), st.just('{"x": 1}'), st.just([1])),
            "tool_result": _values,
            "kind": st.just("user"),
            "status": st.just("error"),
            "id": st.integers(),
        },
    ),
    st.fixed_dictionaries({"name": st.just("a")}),
    st.one_of(st.just(["a"]), st.just("a"), st.integers(), st.none()),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_json_row, max_size=8))
def test_json_rows_read_as_any_rows(rows: list[Any]) -> None:
    """Records from JSON read on the plain path as the general path reads them (or both
    leave them to the per-record path), and what the plain path takes, it reads as the
    per-record path does; a record that path refuses is never taken."""
    fast = _read_plain(rows, json_rows=True)
    general = _read_plain(rows)
    assert (fast is None) == (general is None)
    try:
        each = _read_each(rows, "<t>")
    except TraceRecordError:
        assert fast is None
        return
    for plain in (fast, general):
        if plain is None:
            continue
        assert plain.names == each.names and _results(plain) == _results(each)
        assert _args(plain) == _args(each) and plain.error_positions() == each.error_positions()
        assert plain.kinds is None and each.kinds is None
        assert plain.tools is not None and each.tools is not None
        assert plain.tools.codes.tolist() == each.tools.codes.tolist()
        assert plain.tool_call_count() == each.tool_call_count()


@settings(max_examples=300, deadline=None)
@given(st.lists(_json_row, max_size=8))
def test_rows_parsed_by_orjson_read_as_rows_built_in_python(rows: list[Any]) -> None:
    """Records parsed as the loaders parse them (orjson where it reads as json does, its
    records sharing its key objects) read on the JSON path as the same records built in
    Python read on the general path: the same columns, or both left to the per-record
    path."""
    text = json.dumps(rows)
    parsed = json_reader(text)(text)
    fast = _read_plain(parsed, json_rows=True)
    general = _read_plain(rows)
    assert (fast is None) == (general is None)
    if fast is None or general is None:
        return
    assert fast.names == general.names and fast.args == general.args
    assert fast.results == general.results and fast.errors == general.errors
    assert fast.tools is not None and general.tools is not None
    assert fast.tools.codes.tolist() == general.tools.codes.tolist()


def test_keys_equal_to_the_field_names_but_other_objects_are_found() -> None:
    """Records whose keys are other string objects than the first record's (or than the
    field names) are read by value, as a dict lookup reads them."""
    key = "".join(["tool", "_name"])  # equal to "tool_name", not the same object
    rows = [{key: "a", "arguments": {"x": 1}}, {"tool_name": "b", "".join(["argu", "ments"]): {}}]
    columns = _read_plain(rows, json_rows=True)
    assert columns is not None
    assert columns.names == ("a", "b") and columns.args == [{"x": 1}, {}]


def test_tool_codes_past_a_byte_equal_the_code_table() -> None:
    """A chunk naming tools whose codes are past 255 (no longer one byte each) is coded
    as the code table codes it."""
    names = [f"wide_tool_{i}" for i in range(300)]
    ToolCodes.of(names)  # every name now has a code, most of them past 255
    assert max(c for c in map(tool_code, names) if c is not None) > 255
    columns = _read_plain([{"tool_name": n} for n in names], json_rows=True)
    assert columns is not None and columns.tools is not None
    assert columns.tools.codes.tolist() == [tool_code(n) for n in names]
    assert columns.tools.codes.dtype == np.int32


def test_a_chunk_of_one_known_name_is_coded_as_the_table_codes_it() -> None:
    """A chunk of a single call whose name is already accepted (one lookup, no tuple of
    lookups to take it from) is coded as the code table codes it."""
    assert _read_plain([{"tool_name": "solo"}], json_rows=True) is not None  # accepted now
    columns = _read_plain([{"tool_name": "solo"}], json_rows=True)
    assert columns is not None and columns.tools is not None
    assert columns.tools.codes.tolist() == [tool_code("solo")]
