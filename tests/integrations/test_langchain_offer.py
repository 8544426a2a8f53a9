"""The LangChain middleware's ``offer`` option on a real ``create_agent`` graph: the tools
bound for each model call, the note in the system message, and every call still checked."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.integrations._adapter_specs import rules
from tests.integrations.adapters import AgentGuardMiddleware


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order."""
    return f'{{"order_id": "{order_id}"}}'


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund."""
    return "refunded"


@tool
def delete_account() -> str:
    """Delete the account."""
    return "deleted"


TOOLS = [lookup_order, issue_refund, delete_account]


def _run(script: list[Any], **options: Any) -> tuple[Any, ScriptedChatModel, Any]:
    model = ScriptedChatModel(script)
    spec = rules(block=["delete_account"], requires={"issue_refund": "lookup_order"})
    middleware = AgentGuardMiddleware(spec, **options)
    agent = create_agent(model, TOOLS, middleware=[middleware], system_prompt="You help.")
    task: InputAgentState = {"messages": [HumanMessage("refund order A1")]}
    out = agent.invoke(task)
    return out, model, middleware.agentguard


def test_narrow_binds_only_the_tools_not_refused_now() -> None:
    """Before the lookup, issue_refund and delete_account are not offered; after it,
    issue_refund is; the system message keeps the prompt and adds the note."""
    script = [
        call("lookup_order", order_id="A1"),
        call("issue_refund", order_id="A1", amount=40),
        "done",
    ]
    _, model, session = _run(script, offer="narrow")
    assert model.bound_tools[0] == ("lookup_order",)
    assert model.bound_tools[1] == ("lookup_order", "issue_refund")
    first = model.system_prompts[0]
    assert first.startswith("You help.")
    assert "Refused now: issue_refund (lookup_order_before_issue_refund)" in first
    assert [d.action.value for d in session.attempts] == ["allow", "allow", "allow"]


def test_annotate_offers_every_tool_with_the_note() -> None:
    """``annotate`` binds every tool and says which are refused now."""
    _, model, _ = _run([call("lookup_order", order_id="A1"), "done"], offer="annotate")
    assert model.bound_tools[0] == ("lookup_order", "issue_refund", "delete_account")
    assert "Refused now: issue_refund" in model.system_prompts[0]
    assert "delete_account (no_delete_account)" in model.system_prompts[0]


def test_a_withheld_tool_called_anyway_is_refused_with_the_alternatives() -> None:
    """The offer only informs: a call to a withheld tool is still proposed and refused,
    and the refusal lists what may run instead."""
    script = [call("issue_refund", order_id="A1", amount=40), "done"]
    _, model, session = _run(script, offer="narrow")
    assert [d.action.value for d in session.attempts[:1]] == ["block"]
    assert "Allowed now: lookup_order" in model.observations[1]
    assert "Allowed now" not in session.attempts[0].violations[0].message


def test_without_the_option_nothing_changes() -> None:
    """No ``offer``: every tool bound, the system prompt as given."""
    _, model, _ = _run([call("lookup_order", order_id="A1"), "done"])
    assert model.bound_tools[0] == ("lookup_order", "issue_refund", "delete_account")
    assert model.system_prompts[0] == "You help."


def test_shadow_mode_changes_nothing() -> None:
    """In shadow mode the model sees the tools and prompt it would without the policy."""
    _, model, _ = _run([call("lookup_order", order_id="A1"), "done"], offer="narrow", mode="shadow")
    assert model.bound_tools[0] == ("lookup_order", "issue_refund", "delete_account")
    assert model.system_prompts[0] == "You help."


def test_a_bad_offer_is_refused_naming_the_choices() -> None:
    """A misspelt choice fails when the guard is built... or at its first run."""
    from agentguard.enforcement.options import FirewallConfigError

    with pytest.raises(FirewallConfigError, match="narrow, annotate"):
        _run(["done"], offer="narrwo")
