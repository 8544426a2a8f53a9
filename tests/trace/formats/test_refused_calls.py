"""Calls agentguard refused, in every transcript format that holds them: a call answered
with a refusal never ran, so inserting refused calls anywhere in a transcript leaves its
trace as it was; an unanswered call may have run, so it is kept (docs/traces.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.trace import UNKNOWN, detect_format, trace_from_json
from agentguard.trace.refusal import BLOCKED_HEAD, refusal_text
from tests.trace.formats.refused_runs import calls_of

Entry = tuple[str, str, str, bool]
"""``(kind, tool, text, error)``: kind ``ran`` (its output, a tool error or not) or
``refused`` (its answer is agentguard's refusal)."""


def openai_chat(entries: list[Entry]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, (_, tool, text, _) in enumerate(entries):
        fn = {"name": tool, "arguments": "{}"}
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{n}", "type": "function", "function": fn}],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"c{n}", "content": text})
    return out


def langchain(entries: list[Entry]) -> list[dict[str, Any]]:
    """As ``messages_to_dict`` writes them; a refusal is a ``status="error"`` reply."""
    out: list[dict[str, Any]] = [{"type": "human", "data": {"content": "go"}}]
    for n, (kind, tool, text, error) in enumerate(entries):
        call = {"id": f"c{n}", "name": tool, "args": {}}
        out.append({"type": "ai", "data": {"content": "", "tool_calls": [call]}})
        status = "error" if kind == "refused" or error else "success"
        reply = {"content": text, "tool_call_id": f"c{n}", "name": tool, "status": status}
        out.append({"type": "tool", "data": reply})
    return out


def anthropic(entries: list[Entry]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, (kind, tool, text, error) in enumerate(entries):
        use = {"type": "tool_use", "id": f"t{n}", "name": tool, "input": {}}
        out.append({"role": "assistant", "content": [use]})
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": f"t{n}", "content": text}
        if kind == "refused" or error:
            result["is_error"] = True
        out.append({"role": "user", "content": [result]})
    return out


def responses(entries: list[Entry]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, (_, tool, text, _) in enumerate(entries):
        out.append({"type": "function_call", "call_id": f"c{n}", "name": tool, "arguments": "{}"})
        out.append({"type": "function_call_output", "call_id": f"c{n}", "output": text})
    return out


def mcp(entries: list[Entry]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, (kind, tool, text, error) in enumerate(entries, start=1):
        params = {"name": tool, "arguments": {}}
        out.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        result = {
            "content": [{"type": "text", "text": text}],
            "isError": kind == "refused" or error,
        }
        out.append({"jsonrpc": "2.0", "id": n, "result": result})
    return out


BUILDERS: dict[str, Callable[[list[Entry]], list[dict[str, Any]]]] = {
    "openai-chat": openai_chat,
    "langchain": langchain,
    "anthropic": anthropic,
    "openai-responses": responses,
    "mcp": mcp,
}

TOOL = st.sampled_from(["lookup", "refund", "wipe"])
LINE = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
OUTPUT = st.one_of(
    LINE.map(lambda s: f"out {s}"),
    LINE.map(lambda s: f"log {s}\n{BLOCKED_HEAD}"),  # the marker later: the tool's own text
)
RAN = st.tuples(st.just("ran"), TOOL, OUTPUT, st.booleans())
REFUSED = st.tuples(
    st.just("refused"),
    TOOL,
    st.builds(lambda reason, stopped: refusal_text(reason, stopped=stopped), LINE, st.booleans()),
    st.just(True),
)


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
@given(st.lists(RAN, max_size=5), st.lists(st.tuples(st.integers(0, 5), REFUSED), max_size=4))
def test_inserting_refused_calls_leaves_the_trace_unchanged(
    fmt: str, ran: list[Entry], refused: list[tuple[int, Entry]]
) -> None:
    """Refused calls anywhere among the calls that ran: the same calls, results, error
    positions and ``num_tool_calls`` as the transcript without them."""
    full = list(ran)
    for at, entry in refused:
        full.insert(min(at, len(full)), entry)
    build = BUILDERS[fmt]
    assert detect_format(build(full or [RAN_EXAMPLE])) == fmt
    with_them = trace_from_json(build(full), format=fmt if full else None)
    without = trace_from_json(build(ran), format=fmt if ran else None)
    assert calls_of(with_them) == calls_of(without)
    assert with_them.tool_errors == without.tool_errors
    assert with_them.metrics["num_tool_calls"] == without.metrics["num_tool_calls"] == len(ran)


RAN_EXAMPLE: Entry = ("ran", "lookup", "out", False)


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_an_unanswered_call_is_kept_with_an_unknown_result(fmt: str) -> None:
    """A call with no reply at all (the run was cut, the reply lost) may have run: it is
    judged, with an unknown result (docs/traces.md, "What cannot be recovered")."""
    transcript = BUILDERS[fmt]([("ran", "wipe", "x", False)])
    del transcript[-1]  # the reply
    t = trace_from_json(transcript, format=fmt)
    assert [(c.name, c.result) for c in t] == [("wipe", UNKNOWN)]
    assert t.metrics["num_tool_calls"] == 1
