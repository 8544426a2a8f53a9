"""MCP CallToolResults unwrapped to the value a spec tests, online and in the loaders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agentguard.scoring import verify_trace
from agentguard.trace.loaders import iter_trace_file
from agentguard.trace.mcp_content import (
    is_call_tool_result,
    is_content_list,
    mcp_result,
    read_arguments,
    unwrap_call_tool_result,
)
from agentguard.trace.model import Trace

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _text_result(payload: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": payload}], "isError": error}


@given(json_values.filter(lambda v: not isinstance(v, str)))
def test_one_text_block_of_json_is_its_value(value: Any) -> None:
    """A single text block holding JSON unwraps to the JSON value (round trip)."""
    assert unwrap_call_tool_result(_text_result(json.dumps(value))) == (value, False)


def test_plain_text_stays_text_and_is_error_is_reported() -> None:
    """Text that is not JSON stays the text; isError is returned as the error flag."""
    assert unwrap_call_tool_result(_text_result("no order Z9", error=True)) == ("no order Z9", True)


def test_several_blocks_are_a_list_and_empty_content_falls_back_to_structured() -> None:
    """Several blocks become a list (non-text blocks kept); no content reads structuredContent."""
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    value, _ = unwrap_call_tool_result({"content": [{"type": "text", "text": '{"a": 1}'}, image]})
    assert value == [{"a": 1}, image]
    assert unwrap_call_tool_result({"content": [], "structuredContent": {"n": 2}}) == (
        {"n": 2},
        False,
    )


def test_only_call_tool_result_shapes_are_unwrapped() -> None:
    """A dict that merely has a `content` key (an ordinary result) is left alone."""
    ordinary = {"content": "hello", "author": "x"}
    assert not is_call_tool_result(ordinary)
    assert mcp_result(ordinary) == (ordinary, None)
    assert not is_call_tool_result({"content": [{"type": "text", "text": "x"}], "other": 1})


def test_records_holding_mcp_results_load_unwrapped(tmp_path: Path) -> None:
    """A trace file whose results are raw CallToolResults loads with the values and the
    errors, so `result.verified = true` holds offline as it does behind the proxy."""
    records = [
        {
            "tool_name": "lookup_order",
            "arguments": {"order_id": "A1"},
            "tool_result": _text_result('{"verified": true}'),
        },
        {
            "tool_name": "issue_refund",
            "arguments": {"order_id": "A1"},
            "tool_result": _text_result("declined", error=True),
        },
    ]
    path = tmp_path / "mcp_records.json"
    path.write_text(json.dumps(records))
    (loaded,) = list(iter_trace_file(path))
    trace = loaded.trace
    assert isinstance(trace, Trace)
    assert trace[0].result == {"verified": True} and not trace[0].error
    assert trace[1].result == "declined" and trace[1].error
    assert trace.tool_errors == frozenset({1})
    spec = "constraint verified_refund := G(issue_refund -> O lookup_order(result.verified = true))"
    assert verify_trace(trace, spec).score == 1.0


@given(json_values.filter(lambda v: not isinstance(v, str)))
def test_a_bare_content_list_unwraps_as_its_envelope_does(value: Any) -> None:
    """``[{"type": "text", ...}]`` (the content alone, as some servers and SDKs return it)
    is the value ``{"content": [...]}`` unwraps to; it says nothing about errors."""
    blocks = [{"type": "text", "text": json.dumps(value)}]
    assert mcp_result(blocks) == (unwrap_call_tool_result({"content": blocks})[0], None)
    assert mcp_result(blocks)[0] == value


def test_lists_that_are_not_content_blocks_are_left_alone() -> None:
    """A tool's own list of typed records, an unknown block type, a block missing its
    field, an empty list: none is taken for MCP content."""
    for ordinary in (
        [{"type": "text", "text": "x", "author": "me"}],
        [{"type": "order", "id": 1}],
        [{"type": "text"}],
        [{"type": "text", "text": "x"}, 3],
        [],
    ):
        assert not is_content_list(ordinary)
        assert mcp_result(ordinary) == (ordinary, None)


def test_records_holding_bare_content_lists_load_unwrapped(tmp_path: Path) -> None:
    """A records file whose results are bare content lists loads with their values, on the
    columnar path (plain records) and the per-record one (an extra key) alike."""
    blocks = [{"type": "text", "text": '{"verified": true}'}]
    spec = "constraint verified := G(refund -> O lookup(result.verified = true))"
    for extra in ({}, {"note": "per-record path"}):
        records = [
            {"tool_name": "lookup", "arguments": {}, "tool_result": blocks, **extra},
            {"tool_name": "refund", "arguments": {}, "tool_result": "done"},
        ]
        path = tmp_path / "bare.json"
        path.write_text(json.dumps(records))
        (loaded,) = list(iter_trace_file(path))
        assert isinstance(loaded.trace, Trace)
        assert loaded.trace[0].result == {"verified": True}
        assert verify_trace(loaded.trace, spec).score == 1.0
    mixed = Trace.from_records(
        [
            {
                "tool_name": "a",
                "tool_result": [*blocks, {"type": "image", "data": "AA", "mimeType": "image/png"}],
            }
        ]
    )
    assert mixed[0].result == [
        {"verified": True},
        {"type": "image", "data": "AA", "mimeType": "image/png"},
    ]


def test_a_read_is_judged_with_its_uri_decoded() -> None:
    assert read_arguments("file:///%65tc/passwd") == {"uri": "file:///etc/passwd"}
    assert read_arguments("file:///%2565tc/passwd") == {"uri": "file:///etc/passwd"}
    assert read_arguments("file:///a%20b.txt") == {"uri": "file:///a b.txt"}
    assert read_arguments("file:///plain") == {"uri": "file:///plain"}
    assert read_arguments("x%FF") == {"uri": "x\ufffd"}


def test_a_read_is_judged_with_its_path_normalised() -> None:
    assert read_arguments("file:///work/../etc/passwd") == {"uri": "file:///etc/passwd"}
    assert read_arguments("file:////etc//passwd") == {"uri": "file:///etc/passwd"}
    assert read_arguments("file:///work/%2E%2E/etc/./x/") == {"uri": "file:///etc/x/"}
    assert read_arguments("docs://readme?v=/../1#a") == {"uri": "docs://readme?v=/../1#a"}
    assert read_arguments("secret:vault/../key") == {"uri": "secret:key"}
    # a template reads what follows // as path: .. climbs over its first name too, and
    # a .. with nothing to climb stays where nothing roots the path
    assert read_arguments("notes://public/../private/keys") == {"uri": "notes://private/keys"}
    assert read_arguments("notes://public/../../x") == {"uri": "notes://../x"}
    assert read_arguments("file:///C:/work/..%5C..\\secret") == {"uri": "file:///secret"}


def test_a_file_uri_is_judged_as_the_local_path_it_names() -> None:
    """As a file server taking the uri apart with ``urllib.parse`` reads it: its host
    (``localhost``, a user, a port) dropped, the scheme's case, tabs and line breaks and
    the spaces around it ignored, an escaped ``?`` part of the path."""
    for uri in (
        "file://localhost/etc/passwd",
        "file://user:pw@host:99/etc/passwd",
        "FILE:///etc/passwd",
        " file:///etc/passwd\n",
        "file:///e\tt\nc/passwd",
        "file:///tmp/%3F/../../etc/passwd",
        "file:/etc/passwd",
    ):
        assert read_arguments(uri) == {"uri": "file:///etc/passwd"}, uri


@given(st.text(alphabet="%256ACFabc/.?#:\\ \t", max_size=32))
def test_decoding_a_uri_twice_changes_nothing(uri: str) -> None:
    """Decoded to its end: what a server decodes once more is what the spec saw
    (within the bound of 16 decodings, which takes more than 32 characters to pass)."""
    once = read_arguments(uri)["uri"]
    assert read_arguments(once)["uri"] == once
