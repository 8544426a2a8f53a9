"""The OpenAI Agents SDK adapter's ``offer="narrow"``: the SDK's dynamic tool enabling
(``FunctionTool.is_enabled``) hides the tools refused now from each model call; every
call is still judged. A real ``Runner`` driven by a scripted ``agents.Model``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

agents = pytest.importorskip("agents")
from agents import Agent, Runner, function_tool, set_tracing_disabled  # noqa: E402

import agentguard  # noqa: E402
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call  # noqa: E402

SPEC = agentguard.parse_spec(
    """
spec refunds
constraint identity_first severity SOFT_BLOCK := G(issue_refund -> O verify_identity)
"""
)


@pytest.fixture(autouse=True)
def _sdk_defaults() -> Iterator[None]:
    set_tracing_disabled(True)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.close()
    asyncio.set_event_loop(None)


@function_tool
def verify_identity(customer_id: str) -> str:
    """Check the customer's identity."""
    return f"{customer_id} verified"


@function_tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount} on {order_id}"


def _agent(script: list[Any], **options: Any) -> tuple[Any, ScriptedAgentsModel]:
    model = ScriptedAgentsModel(script)
    support = Agent(
        name="support", instructions="help", tools=[verify_identity, issue_refund], model=model
    )
    return agentguard.guard(support, SPEC, **options), model


def test_narrow_disables_the_refund_until_the_identity_is_verified() -> None:
    """The first model call is offered verify_identity only; the second both."""
    support, model = _agent(
        [
            call("verify_identity", customer_id="C1"),
            call("issue_refund", order_id="A1", amount=5.0),
            "done",
        ],
        offer="narrow",
    )
    result = Runner.run_sync(support, "refund A1")
    assert result.final_output == "done"
    assert model.seen_tools[0] == ["verify_identity"]
    assert model.seen_tools[1] == ["verify_identity", "issue_refund"]


def test_without_the_option_every_tool_is_offered() -> None:
    """No ``offer``: the SDK offers every tool as usual."""
    support, model = _agent(["done"])
    Runner.run_sync(support, "hello")
    assert model.seen_tools[0] == ["verify_identity", "issue_refund"]


def test_a_disabled_tool_called_anyway_never_runs() -> None:
    """The model names the hidden tool anyway: the SDK finds no such tool for this turn
    and raises; nothing ran and nothing entered the trace."""
    ran: list[str] = []

    @function_tool
    def issue_refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        ran.append(order_id)
        return "refunded"

    model = ScriptedAgentsModel([call("issue_refund", order_id="A1", amount=5.0), "gave up"])
    support = agentguard.guard(
        Agent(
            name="support", instructions="help", tools=[verify_identity, issue_refund], model=model
        ),
        SPEC,
        offer="narrow",
    )
    with pytest.raises(agents.exceptions.ModelBehaviorError, match="issue_refund not found"):
        Runner.run_sync(support, "refund A1")
    assert ran == []
