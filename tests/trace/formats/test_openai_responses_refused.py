"""A guarded OpenAI Agents SDK run's own items (``result.to_input_list()``, Responses
items) scored offline equal the guard's report: a call agentguard refused is answered
with the refusal as its ``function_call_output`` and never ran, so it is not read back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

import agentguard
from agentguard.trace import trace_from_json
from agentguard.trace.refusal import BLOCKED_HEAD
from tests.trace.formats.refused_runs import assert_offline_equals_online

pytest.importorskip("agents")
from agents import Agent, Runner, function_tool, set_tracing_disabled

from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call


@pytest.fixture(autouse=True)
def _sdk_defaults() -> Iterator[None]:
    """No trace export; a loop of the test's own for Runner.run_sync, closed after."""
    set_tracing_disabled(True)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.close()
    asyncio.set_event_loop_policy(None)


@function_tool
def lookup(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: the order
    """
    return f"order {order_id} verified"


@function_tool
def refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: the order
    """
    return f"refunded {order_id}"


SPEC = """
constraint verified severity SOFT_BLOCK(5) := G(refund -> O lookup)
constraint once := CalledN(refund, 1, <=)
"""


def run(script: list[Any]) -> tuple[list[Any], Any]:
    """The run's items as JSON (the way they are saved) and its report."""
    agent = Agent(
        name="shop", instructions="x", tools=[lookup, refund], model=ScriptedAgentsModel(script)
    )
    agentguard.guard(agent, agentguard.parse_spec(SPEC))
    result = Runner.run_sync(agent, "refund A")
    return json.loads(json.dumps(result.to_input_list(), default=str)), agent.agentguard.report


def test_a_refused_call_is_left_out() -> None:
    """Refund (refused), lookup, refund, answer: offline lookup, refund, final_answer."""
    first = call("refund", order_id="A")
    items, report = run([first, call("lookup", order_id="A"), first, "ok"])
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert outputs[0].startswith(BLOCKED_HEAD)
    offline = assert_offline_equals_online(items, SPEC, report)
    assert offline.names == ("lookup", "refund", "final_answer")
    assert report.compliance.score == 1.0


def test_a_parallel_turn_keeps_the_call_that_ran() -> None:
    """refund and lookup in one turn: the refund is refused (nothing looked up yet), the
    lookup runs; then the refund again, which runs."""
    items, report = run(
        [
            [call("refund", order_id="A"), call("lookup", order_id="A")],
            call("refund", order_id="A"),
            "ok",
        ]
    )
    offline = assert_offline_equals_online(items, SPEC, report)
    assert offline.names == ("lookup", "refund", "final_answer")


def test_an_output_that_quotes_the_marker_later_is_kept() -> None:
    """A function's own output that mentions the marker after its first line ran."""
    quoted = f"log:\n{BLOCKED_HEAD}"
    items = [
        {"type": "function_call", "call_id": "a", "name": "fetch", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": quoted},
    ]
    assert [(c.name, c.result) for c in trace_from_json(items)] == [("fetch", quoted)]
