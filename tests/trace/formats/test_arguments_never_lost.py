"""Every reader: a call's arguments are read, or the record is refused naming them;
never silently ``{}`` (docs/traces.md, "Arguments are never lost").

The law, per reader: arguments placed under the key the format uses are read exactly;
placed under a key the reader does not read, the record is an error naming that key;
under the right key but not an object (nor the JSON text of one), an error. Nothing
yields ``{}`` for a call that had arguments. Before this, reading AgentDojo's run files
(``args``) as OpenAI chat gave every call ``{}``, and ``G !send_money(recipient = X)``
passed on a run that paid X.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import TraceRecordError
from agentguard.trace.formats import parse
from agentguard.trace.formats.agentguard_logs import EVENT_KEYS

Build = Callable[[str, Any], Any]
"""``build(key, value)``: a one-call record of the format, ``value`` under ``key``."""


def _chat(key: str, value: Any) -> Any:
    call = {"id": "c1", "type": "function", "function": {"name": "t", key: value}}
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]


def _inspect(key: str, value: Any) -> Any:
    call = {"id": "c1", "function": "t", key: value}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]


def _legacy(key: str, value: Any) -> Any:
    return [
        {"role": "assistant", "content": None, "function_call": {"name": "t", key: value}},
        {"role": "function", "name": "t", "content": "ok"},
    ]


def _tau2(key: str, value: Any) -> Any:
    call = {"id": "c1", "name": "t", key: value, "requestor": "assistant"}
    return {
        "task_id": "1",
        "trial": 0,
        "reward_info": {"reward": 1.0},
        "messages": [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "id": "c1", "content": "ok"},
        ],
    }


def _tau_bench(key: str, value: Any) -> Any:
    return {"task_id": 1, "reward": 1.0, "trial": 0, "traj": _chat(key, value)}


def _anthropic(key: str, value: Any) -> Any:
    use = {"type": "tool_use", "id": "u1", "name": "t", key: value}
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "ok"}],
        },
    ]


def _claude_code(key: str, value: Any) -> Any:
    return [{"type": m["role"], "message": m} for m in _anthropic(key, value)]


def _gemini(key: str, value: Any) -> Any:
    return [
        {"role": "model", "parts": [{"functionCall": {"name": "t", key: value}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "t", "response": {"output": "ok"}}}],
        },
    ]


def _langchain(key: str, value: Any) -> Any:
    return [
        {"type": "ai", "content": "", "tool_calls": [{"name": "t", key: value, "id": "c1"}]},
        {"type": "tool", "content": "ok", "tool_call_id": "c1"},
    ]


def _langchain_openai(key: str, value: Any) -> Any:
    call = {"id": "c1", "type": "function", "function": {"name": "t", key: value}}
    return [
        {"type": "ai", "content": "", "additional_kwargs": {"tool_calls": [call]}},
        {"type": "tool", "content": "ok", "tool_call_id": "c1"},
    ]


def _responses(key: str, value: Any) -> Any:
    return [
        {"type": "function_call", "call_id": "c1", "name": "t", key: value},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]


def _mcp(key: str, value: Any) -> Any:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", key: value}},
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}},
    ]


def _smolagents(key: str, value: Any) -> Any:
    call = {"id": "c1", "type": "function", "function": {"name": "t", key: value}}
    return [{"step_number": 1, "tool_calls": [call], "observations": "ok"}]


def _log(key: str, value: Any) -> Any:
    event = {"event": "agentguard.result", "run_id": "r", "tool": "t", key: value}
    return [{**event, "result": "ok", "is_error": False, "position": 0}]


def _report(key: str, value: Any) -> Any:
    return {"decisions": [{"action": "allow", "tool": "t", key: value}], "compliance": {}}


def _records(key: str, value: Any) -> Any:
    return [{"tool_name": "t", key: value, "tool_result": "ok"}]


def _metrics(key: str, value: Any) -> Any:
    return {"tool_calls": [{"tool_name": "t", key: value}]}


def _agentdojo(key: str, value: Any) -> Any:
    call = {"function": "t", key: value, "id": "c1", "placeholder_args": None}
    return {
        "suite_name": "s",
        "user_task_id": "user_task_0",
        "messages": [
            {"role": "user", "content": [{"type": "text", "content": "go"}]},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "content": [{"type": "text", "content": "ok"}],
                "tool_call_id": "c1",
                "tool_call": None,
                "error": None,
            },
        ],
    }


READERS: dict[str, tuple[str, str, Build, frozenset[str]]] = {
    # case: (format, the arguments' key, build, keys the reader reads besides it)
    "openai-chat": ("openai-chat", "arguments", _chat, frozenset({"name"})),
    "inspect": (
        "openai-chat",
        "arguments",
        _inspect,
        frozenset({"id", "type", "function", "parse_error", "view", "internal", "internal_name"}),
    ),
    "openai-chat legacy": ("openai-chat", "arguments", _legacy, frozenset({"name"})),
    "tau2": ("tau2", "arguments", _tau2, frozenset({"id", "name", "requestor"})),
    "tau-bench": ("tau-bench", "arguments", _tau_bench, frozenset({"name"})),
    "anthropic": (
        "anthropic",
        "input",
        _anthropic,
        frozenset({"type", "id", "name", "cache_control", "caller", "server_name"}),
    ),
    "claude-code": (
        "claude-code",
        "input",
        _claude_code,
        frozenset({"type", "id", "name", "cache_control", "caller", "server_name"}),
    ),
    "gemini": (
        "gemini",
        "args",
        _gemini,
        frozenset({"id", "name", "partialArgs", "partial_args", "willContinue", "will_continue"}),
    ),
    "langchain": ("langchain", "args", _langchain, frozenset({"name", "id", "type"})),
    "langchain openai-style": ("langchain", "arguments", _langchain_openai, frozenset({"name"})),
    "openai-responses": (
        "openai-responses",
        "arguments",
        _responses,
        frozenset({"type", "id", "call_id", "name", "status", "namespace"}),
    ),
    "mcp": ("mcp", "arguments", _mcp, frozenset({"name", "_meta", "task"})),
    "smolagents": ("smolagents", "arguments", _smolagents, frozenset({"name", "description"})),
    "agentguard-log": ("agentguard-log", "args", _log, EVENT_KEYS),
    "agentguard-report": ("agentguard-report", "args", _report, EVENT_KEYS),
    "records": (
        "records",
        "arguments",
        _records,
        frozenset(
            {"tool_name", "name", "tool", "tool_result", "result", "output", "observation"}
            | {"is_error", "status", "kind", "args", "input", "tool_input"}
        ),
    ),
    "metrics": (
        "metrics",
        "arguments",
        _metrics,
        frozenset(
            {"tool_name", "name", "tool", "tool_result", "result", "output", "observation"}
            | {"is_error", "status", "kind", "args", "input", "tool_input"}
        ),
    ),
    "agentdojo": (
        "agentdojo",
        "args",
        _agentdojo,
        frozenset({"function", "id", "placeholder_args"}),
    ),
}

ARGS = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.one_of(st.integers(-5, 5), st.text(max_size=8), st.booleans(), st.none()),
    min_size=1,
    max_size=4,
)
KEYS = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,12}", fullmatch=True)
NOT_OBJECTS = st.one_of(
    st.lists(st.integers(), min_size=1, max_size=3),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.just("[1, 2]"),
    st.just("not json"),
    st.just("null"),
)


def load(case: str, key: str, value: Any) -> dict[str, Any]:
    """The arguments of the one tool call the reader makes of the record."""
    fmt, _, build, _ = READERS[case]
    trace, _ = parse(build(key, value), source="<t>", format=fmt)
    (call,) = [c for c in trace if c.is_tool and c.name == "t"]
    return dict(call.args)


@pytest.mark.parametrize("case", list(READERS))
@settings(max_examples=25, deadline=None)
@given(args=ARGS, as_text=st.booleans())
def test_arguments_under_their_key_are_read(case: str, args: dict[str, Any], as_text: bool) -> None:
    """Under the format's own key, as an object or as JSON text, the arguments are read."""
    _, key, _, _ = READERS[case]
    value = (
        json.dumps(args)
        if as_text and case not in ("agentguard-log", "agentguard-report")
        else args
    )
    assert load(case, key, value) == args


@pytest.mark.parametrize("case", list(READERS))
@settings(max_examples=25, deadline=None)
@given(args=ARGS, key=KEYS, as_text=st.booleans())
def test_arguments_under_another_key_are_refused(
    case: str, args: dict[str, Any], key: str, as_text: bool
) -> None:
    """Under a key the reader does not read, the record is an error naming the key."""
    _, own, _, read = READERS[case]
    if key == own or key in read:
        return
    value = json.dumps(args) if as_text else args
    with pytest.raises(TraceRecordError, match=repr(key).replace("\\", "\\\\").replace("(", r"\(")):
        load(case, key, value)


@pytest.mark.parametrize("case", [c for c in READERS if c != "smolagents"])
@settings(max_examples=15, deadline=None)
@given(value=NOT_OBJECTS)
def test_arguments_that_are_not_an_object_are_refused(case: str, value: Any) -> None:
    """Under the right key but not an object (nor its JSON text): an error, not ``{}``.
    (smolagents reads a text that is no JSON object as the tool's one input.)"""
    _, key, _, _ = READERS[case]
    with pytest.raises(TraceRecordError, match="arguments"):
        load(case, key, value)


def test_the_agentdojo_run_read_as_chat_is_refused() -> None:
    """The motivating case: AgentDojo's ``{"function", "args"}`` read by the chat reader."""
    run = _agentdojo("args", {"recipient": "US133000000121212121212"})
    with pytest.raises(
        TraceRecordError, match=r"message 1: no arguments under 'arguments'.*'args'"
    ):
        parse(run["messages"], source="<t>", format="openai-chat")


def test_a_call_with_no_arguments_anywhere_is_still_read() -> None:
    """No arguments at all (no key, or an empty object) and nothing else: ``{}``, as before."""
    assert load("gemini", "args", {}) == {}
    trace, _ = parse(
        [{"role": "model", "parts": [{"functionCall": {"name": "t"}}]}],
        source="<t>",
        format="gemini",
    )
    assert trace[0].args == {}
    assert load("records", "arguments", None) == {}
