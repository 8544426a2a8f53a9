"""A smolagents ToolCallingAgent's own memory (``agent.memory.get_full_steps()``) scored
offline equals the guard's report when smolagents rejected calls before running them
(missing arguments, unknown tools): those never ran and are not read back as calls, while
a tool that raised ran, with its error. The reader does not depend on the guard: an
unguarded agent's memory of the same run reads back the same."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

import agentguard as ag
from agentguard.enforcement.decision import RunStopped
from agentguard.trace import trace_from_json
from tests.trace.formats.refused_runs import assert_offline_equals_online

pytest.importorskip("smolagents")

from smolagents import ToolCallingAgent, tool

from agentguard.testing.smolagents_models import ScriptedModel, call, call_with_id
from tests.trace.formats.smolagents_tools import lookup, refund


@tool
def flaky(order_id: str) -> str:
    """Fail on every order.

    Args:
        order_id: the order
    """
    raise RuntimeError(f"backend down for {order_id}")


SPEC = """
constraint verified severity SOFT_BLOCK(5) := G(refund -> O lookup)
constraint once := CalledN(refund, 1, <=)
"""


def _agent(script: list[Any]) -> Any:
    return ToolCallingAgent(
        tools=[lookup, refund, flaky], model=ScriptedModel(script), verbosity_level=0
    )


def _steps(agent: Any) -> list[Any]:
    """The memory steps as JSON, the way they are saved."""
    return list(json.loads(json.dumps(agent.memory.get_full_steps(), default=str)))


def guarded(spec: str, script: list[Any]) -> tuple[list[Any], Any]:
    """The memory steps and the report of one guarded run."""
    agent = ag.guard(_agent(script), ag.parse_spec(spec))
    with contextlib.suppress(RunStopped):
        agent.run("refund A")
    return _steps(agent), agent.agentguard.report


def unguarded(script: list[Any]) -> list[Any]:
    """The memory steps of the same run without a guard."""
    agent = _agent(script)
    agent.run("refund A")
    return _steps(agent)


def _errors(steps: list[Any]) -> list[Any]:
    return [s["error"]["type"] for s in steps if s.get("error")]


REJECTED = [
    call("refund"),  # no order_id: AgentToolCallError
    call("nope", order_id="A"),  # no such tool
    call("flaky", order_id="A"),  # the tool raises
    call("lookup", order_id="A"),
    call("refund", order_id="A"),
    call("final_answer", answer="ok"),
]


def test_rejected_calls_are_left_out_and_a_raising_tool_stays() -> None:
    """Missing argument, unknown tool: never ran, left out; the raising tool is a call
    with its error; offline trace and score equal the guard's report."""
    steps, report = guarded(SPEC, REJECTED)
    assert _errors(steps) == [
        "AgentToolCallError",
        "AgentToolExecutionError",
        "AgentToolExecutionError",
    ]
    offline = assert_offline_equals_online(steps, SPEC, report)
    assert offline.names == ("flaky", "lookup", "refund", "final_answer")
    assert offline[0].error and not any(c.error for c in offline[1:])
    assert offline.metrics["tool_errors"] == [0]


def test_an_unguarded_agents_memory_reads_back_the_same() -> None:
    """The same script without a guard: its memory reads back as the guarded run's report."""
    _, report = guarded(SPEC, REJECTED)
    steps = unguarded(REJECTED)
    assert _errors(steps) == [
        "AgentToolCallError",
        "AgentToolExecutionError",
        "AgentToolExecutionError",
    ]
    offline = assert_offline_equals_online(steps, SPEC, report)
    assert offline.names == ("flaky", "lookup", "refund", "final_answer")


def test_a_rejected_final_answer_is_left_out() -> None:
    """A final_answer without its argument is rejected; the next one is the run's answer."""
    script = [call("final_answer"), call("lookup", order_id="A"), call("final_answer", answer="ok")]
    steps, report = guarded(SPEC, script)
    assert _errors(steps) == ["AgentToolCallError"]
    assert assert_offline_equals_online(steps, SPEC, report).names == ("lookup", "final_answer")
    assert assert_offline_equals_online(unguarded(script), SPEC, report).names == (
        "lookup",
        "final_answer",
    )


def _parallel(turn: list[Any]) -> Any:
    """The reader's trace of an unguarded run whose first turn is ``turn``, and that step."""
    steps = unguarded([turn, call("final_answer", answer="ok")])
    assert steps[1]["tool_calls"] == [] and steps[1]["observations"] is None
    return trace_from_json(steps), steps[1]["error"]


def test_an_unknown_tool_in_a_parallel_step_is_left_out() -> None:
    """The unknown-tool error names the tool: that call never ran and is left out; its
    sibling's output is lost from memory, so it keeps the step's error (docs/traces.md)."""
    turn = [call_with_id("c1", "lookup", order_id="A"), call_with_id("c2", "nope")]
    trace, error = _parallel(turn)
    assert error["message"].startswith("Unknown tool nope, should be one of: ")
    assert [(c.name, c.result, c.error) for c in trace] == [
        ("lookup", error["message"], True),
        ("final_answer", "ok", False),
    ]


def test_a_rejected_call_in_a_parallel_step_keeps_every_call() -> None:
    """AgentToolCallError names no tool: which of the step's calls it rejected is not
    known, so every call is kept with the error (docs/traces.md)."""
    turn = [call_with_id("c1", "lookup", order_id="A"), call_with_id("c2", "refund")]
    trace, error = _parallel(turn)
    assert error == {"type": "AgentToolCallError", "message": "Argument order_id is required"}
    assert [(c.name, c.error) for c in trace] == [
        ("lookup", True),
        ("refund", True),
        ("final_answer", False),
    ]


def test_two_names_fitting_the_unknown_tool_wording_keep_every_call() -> None:
    """If two of a parallel step's names fit the unknown-tool message, which one it was is
    not known: every call is kept with the error."""
    message = "Unknown tool a, should be one of: b, should be one of: lookup."
    step = {
        "step_number": 1,
        "tool_calls": [],
        "error": {"type": "AgentToolExecutionError", "message": message},
        "model_output_message": {
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": n, "arguments": {}}}
                for n in ("a", "a, should be one of: b")
            ]
        },
        "observations": None,
    }
    assert [c.name for c in trace_from_json([step])] == ["a", "a, should be one of: b"]


def _failed_step(kind: str, message: str, name: str, arguments: dict[str, Any]) -> Any:
    """A one-call ActionStep whose call smolagents raised for (``ActionStep.dict()``)."""
    return {
        "step_number": 1,
        "tool_calls": [],
        "error": {"type": kind, "message": message},
        "model_output_message": {
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
            ]
        },
        "observations": None,
    }


def test_an_argument_check_that_raised_otherwise_never_ran() -> None:
    """``validate_tool_arguments`` raising other than ValueError/TypeError is worded as a
    tool error without its tail (agents.py 1479-1481): the tool never ran."""
    message = "Error executing tool 'lookup' with arguments {'order_id': 'A'}: KeyError: 'type'"
    step = _failed_step("AgentToolExecutionError", message, "lookup", {"order_id": "A"})
    assert len(trace_from_json([step])) == 0


def test_a_tool_error_whose_head_does_not_match_is_kept_whole() -> None:
    """Arguments smolagents printed otherwise (taken from the agent's state): the
    message is not this call's wording, so it is kept whole, as a tool error."""
    message = (
        "Error executing tool 'lookup' with arguments {'order_id': 42}: E: x\nPlease try again"
    )
    step = _failed_step("AgentToolExecutionError", message, "lookup", {"order_id": "key"})
    [only] = trace_from_json([step])
    assert (only.name, only.result, only.error) == ("lookup", message, True)
