"""LangChain / LangGraph message serialisations."""

from __future__ import annotations

import pytest

from agentguard.trace import detect_format, trace_from_json
from tests.trace.formats.conftest import fixture

pytest.importorskip("langchain_core")

NAMES = ("lookup_order", "lookup_order", "issue_refund", "lookup_order", "final_answer")


@pytest.mark.parametrize(
    "name",
    [
        "langchain_messages_to_dict.json",
        "langchain_model_dump.json",
        "langgraph_state.json",
        "langchain_dumpd.json",
    ],
)
def test_every_serialisation_gives_the_same_trace(name: str) -> None:
    """messages_to_dict, model_dump, a graph state and dumpd all read as the same trace."""
    value = fixture(name)
    assert detect_format(value) == "langchain"
    t = trace_from_json(value)
    assert t.names == NAMES
    assert t[0].result == "no order missing" and t.tool_errors == {0}
    assert t[1].result == {"order_id": "A1", "total": 42.5}
    assert t[2].args == {"order_id": "A1", "amount": 10}
    assert t[4].args == {"answer": "Refunded 10 on A1."}


def test_legacy_additional_kwargs_tool_calls() -> None:
    """Without ``tool_calls``, OpenAI-style ``additional_kwargs.tool_calls`` are read."""
    msgs = [
        {
            "type": "ai",
            "data": {
                "content": "",
                "additional_kwargs": {
                    "tool_calls": [
                        {
                            "id": "x",
                            "type": "function",
                            "function": {"name": "s", "arguments": '{"q": 1}'},
                        }
                    ]
                },
            },
        },
        {"type": "tool", "data": {"content": "ok", "tool_call_id": "x"}},
    ]
    t = trace_from_json(msgs)
    assert t.names == ("s",) and t[0].args == {"q": 1} and t[0].result == "ok"


def test_live_create_agent_messages() -> None:
    """Messages from a real create_agent run load through messages_to_dict."""
    import warnings

    from langchain.agents import create_agent
    from langchain_core.messages import messages_to_dict
    from langchain_core.tools import tool

    from agentguard.testing.langchain_models import ScriptedChatModel, call

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    agent = create_agent(ScriptedChatModel([call("add", a=1, b=2), "3"]), tools=[add])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = agent.invoke({"messages": [{"role": "user", "content": "add"}]})
    t = trace_from_json(messages_to_dict(out["messages"]))
    assert t.names == ("add", "final_answer") and t[0].result == 3
