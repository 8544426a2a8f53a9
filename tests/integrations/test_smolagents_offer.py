"""The smolagents adapter's ``offer`` option on real ToolCallingAgent and CodeAgent runs
with scripted models: the tools offered each step, the prompt, and every call still
checked."""

from __future__ import annotations

from typing import Any

from smolagents import CodeAgent, ToolCallingAgent, tool

from agentguard.guard import guard
from agentguard.testing.smolagents_models import ScriptedModel, call
from tests.integrations._adapter_specs import rules


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def lookup_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    return f"order {order_id}: 40 EUR"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund.

    Args:
        order_id: The order id.
        amount: How much to refund.
    """
    return f"refunded {amount} on {order_id}"


TOOLS = [lookup_order, issue_refund]
SPEC = rules(requires={"issue_refund": "lookup_order"})


def _tool_agent(script: list[Any], **options: Any) -> tuple[ToolCallingAgent, ScriptedModel]:
    model = ScriptedModel(script)
    agent = ToolCallingAgent(tools=TOOLS, model=model, verbosity_level=-1)
    return guard(agent, SPEC, **options), model


def test_narrow_offers_only_the_tools_not_refused_now() -> None:
    """Before the lookup the model is not offered issue_refund; after it, it is."""
    agent, model = _tool_agent(
        [
            call("lookup_order", order_id="A1"),
            call("issue_refund", order_id="A1", amount=5),
            call("final_answer", answer="done"),
        ],
        offer="narrow",
    )
    assert agent.run("refund A1") == "done"
    assert model.offered[0] == ("lookup_order", "final_answer")
    assert model.offered[1] == ("lookup_order", "issue_refund", "final_answer")
    assert "Refused now: issue_refund" in model.system_prompts[0]
    assert "Refused now" not in model.system_prompts[1]


def test_annotate_offers_every_tool_and_the_note() -> None:
    """``annotate``: every tool offered, the note in the system prompt."""
    agent, model = _tool_agent([call("final_answer", answer="done")], offer="annotate")
    agent.run("refund A1")
    assert model.offered[0] == ("lookup_order", "issue_refund", "final_answer")
    assert "Refused now: issue_refund" in model.system_prompts[0]


def test_a_withheld_tool_called_anyway_is_refused_with_the_alternatives() -> None:
    """The offer only informs: the call is still proposed and refused; the model reads
    what it may do instead."""
    agent, model = _tool_agent(
        [call("issue_refund", order_id="A1", amount=5), call("final_answer", answer="no")],
        offer="narrow",
    )
    agent.run("refund A1")
    assert agent.agentguard.attempts[0].action.value == "block"
    assert "Allowed now: lookup_order" in model.observations[1]


def test_without_the_option_the_model_is_the_agents_own() -> None:
    """No ``offer``: the model object is not wrapped, every tool offered."""
    agent, model = _tool_agent([call("final_answer", answer="done")])
    assert agent.model is model
    agent.run("x")
    assert model.offered[0] == ("lookup_order", "issue_refund", "final_answer")


def test_code_agent_prompt_lists_only_the_offered_tools() -> None:
    """A CodeAgent offers tools in its prompt: the prompt is rendered without the
    withheld tool, then with it once it may run."""
    model = ScriptedModel(['lookup_order(order_id="A1")', 'final_answer("done")'])
    agent = guard(CodeAgent(tools=TOOLS, model=model, verbosity_level=-1), SPEC, offer="narrow")
    own = agent.tools
    assert agent.run("refund A1") == "done"
    assert agent.tools is own  # the agent's own mapping, put back after each rendering
    first, second = model.system_prompts[:2]
    assert "def lookup_order" in first and "def issue_refund" not in first
    assert "def issue_refund" in second
    assert "def issue_refund" in agent.system_prompt  # the agent's own prompt is untouched
