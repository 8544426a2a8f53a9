"""smolagents memory steps, from a ToolCallingAgent and a CodeAgent."""

from __future__ import annotations

import pytest

from agentguard.trace import trace_from_json
from tests.trace.formats.conftest import fixture

smolagents = pytest.importorskip("smolagents")


def test_tool_calling_agent_full_steps() -> None:
    """Each tool call is a call, the failed one carries its error, final_answer is the tool call."""
    t = trace_from_json(fixture("smolagents_toolcalling.json"))
    assert t.names == (
        "lookup_order",
        "lookup_order",
        "issue_refund",
        "lookup_order",
        "final_answer",
    )
    assert t[0].args == {"order_id": "missing"} and "no order missing" in t[0].result
    assert t.tool_errors == {0}
    assert t[1].result == {"order_id": "A1", "total": 42.5, "status": "shipped"}
    assert t[2].result == "refunded 10 on A1" and t[3].result["total"] == 42.5
    assert t[4].args == {"answer": "Refunded 10 on A1."}


def test_succinct_steps_read_the_same() -> None:
    """get_succinct_steps() (no model input messages) gives the same trace."""
    full = trace_from_json(fixture("smolagents_toolcalling.json"))
    succinct = trace_from_json(fixture("smolagents_toolcalling_succinct.json"))
    assert succinct.calls == full.calls


def test_code_agent_steps_are_interpreter_calls_then_the_answer() -> None:
    """A CodeAgent step is python_interpreter(code=...) with its logs; the last adds final_answer."""
    t = trace_from_json(fixture("smolagents_code.json"))
    assert t.names == ("python_interpreter",) * 3 + ("final_answer",)
    assert 'lookup_order(order_id="A1")' in t[0].args["code"]
    assert "42.5" in t[0].result
    assert t[3].args == {"answer": "Refunded 10 on A1."}


def test_parallel_outputs_split_by_line_and_final_answer_step() -> None:
    """Parallel calls get one observation line each; a FinalAnswerStep adds the answer."""
    steps = [
        {"task": "t", "task_images": None},
        {
            "step_number": 1,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": {}}},
                {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
            ],
            "observations": "1\n[2, 3]",
            "error": None,
            "is_final_answer": False,
        },
        {"output": "done"},
    ]
    t = trace_from_json({"steps": steps})
    assert t.names == ("a", "b", "final_answer") and t[0].result == 1 and t[1].result == [2, 3]


def test_live_tool_calling_agent_memory() -> None:
    """The memory of a real ToolCallingAgent run loads with every call in order."""
    from smolagents import ToolCallingAgent, tool

    from agentguard.testing.smolagents_models import ScriptedModel, call

    @tool  # type: ignore[untyped-decorator]  # smolagents ships no types
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: first.
            b: second.
        """
        return a + b

    model = ScriptedModel([call("add", a=1, b=2), call("final_answer", answer="3")])
    agent = ToolCallingAgent(tools=[add], model=model, max_steps=3, verbosity_level=0)
    agent.run("add")
    t = trace_from_json(agent.memory.get_full_steps())
    assert t.names == ("add", "final_answer") and t[0].args == {"a": 1, "b": 2} and t[0].result == 3
