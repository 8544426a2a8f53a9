"""smolagents: ``run(reset=False)`` continues the conversation and the guard's trace with it."""

from __future__ import annotations

from typing import Any

import pytest
from smolagents import ToolCallingAgent, tool
from smolagents.memory import ActionStep, TaskStep

from agentguard.enforcement.decision import RunStopped
from agentguard.guard import guard
from agentguard.testing.smolagents_models import ScriptedModel, call
from tests.integrations._adapter_specs import rules, stopped_at


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def verify_identity(customer_id: str) -> str:
    """Verify the customer's identity.

    Args:
        customer_id: The customer.
    """
    return f"verified {customer_id}"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund.

    Args:
        order_id: The order id.
        amount: How much to refund.
    """
    return f"refunded {amount} on {order_id}"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def delete_account() -> str:
    """Delete the customer's account."""
    return "deleted"


TURN_1 = [call("verify_identity", customer_id="C1"), call("final_answer", answer="verified")]
REFUND = [call("issue_refund", order_id="A1", amount=5), call("final_answer", answer="done")]


def agent(script: list[Any], **rule: Any) -> ToolCallingAgent:
    spec = rules(requires={"issue_refund": "verify_identity"}, **rule)
    plain = ToolCallingAgent(
        tools=[verify_identity, issue_refund, delete_account],
        model=ScriptedModel(script),
        verbosity_level=-1,
    )
    return guard(plain, spec)


def actions(guarded: Any) -> list[tuple[str, str]]:
    return [(d.action.value, d.tool) for d in guarded.agentguard.attempts]


def test_reset_false_keeps_smolagents_memory() -> None:
    """smolagents itself keeps the first run's steps when the second runs with reset=False."""
    guarded = agent([*TURN_1, *REFUND])
    guarded.run("verify me")
    guarded.run("now refund", reset=False)
    tasks = [s.task for s in guarded.memory.steps if isinstance(s, TaskStep)]
    assert tasks == ["verify me", "now refund"]
    assert sum(isinstance(s, ActionStep) for s in guarded.memory.steps) == 4


def test_reset_false_continues_the_trace() -> None:
    """Identity verified in run 1 lets run 2 (reset=False) refund; the trace spans both."""
    guarded = agent([*TURN_1, *REFUND])
    guarded.run("verify me")
    first = guarded.agentguard.report
    assert guarded.run("now refund", reset=False) == "done"
    session = guarded.agentguard
    assert session.trace.names == (
        "verify_identity",
        "final_answer",
        "issue_refund",
        "final_answer",
    )
    assert actions(guarded) == [("allow", "issue_refund"), ("allow", "final_answer")]
    assert session.report is not None
    assert first is not None
    assert session.report.run_id == first.run_id
    assert session.report.compliance.score == 1.0


def test_positional_reset_false_is_understood() -> None:
    """run(task, False, False) is stream=False, reset=False, as smolagents reads it."""
    guarded = agent([*TURN_1, *REFUND])
    guarded.run("verify me")
    assert guarded.run("now refund", False, False) == "done"
    assert guarded.agentguard.trace.names[0] == "verify_identity"


def test_a_wrong_run_call_raises_before_any_run_starts() -> None:
    """run() with a keyword smolagents does not know, or the task twice, raises TypeError
    before the guard starts a run: the last report and trace stay the first run's."""
    guarded = agent([*TURN_1, *REFUND])
    guarded.run("verify me")
    first = guarded.agentguard.report
    with pytest.raises(TypeError):
        guarded.run("now refund", resett=False)
    with pytest.raises(TypeError):
        guarded.run("now refund", task="again")
    assert guarded.agentguard.report is first
    assert not guarded.agentguard.active
    assert guarded.agentguard.trace.names == ("verify_identity", "final_answer")
    assert guarded.run("now refund", reset=False) == "done"
    assert guarded.agentguard.trace.names[-2:] == ("issue_refund", "final_answer")


def test_reset_true_starts_a_fresh_trace() -> None:
    """The default reset=True forgets run 1: the refund in run 2 is blocked."""
    guarded = agent(
        [*TURN_1, call("issue_refund", order_id="A1", amount=5), call("final_answer", answer="x")]
    )
    guarded.run("verify me")
    guarded.run("now refund")
    assert actions(guarded)[0] == ("block", "issue_refund")
    assert guarded.agentguard.trace.names == ("final_answer",)


def test_a_stopped_run_stays_stopped_when_continued() -> None:
    """After a HARD_STOP, run(reset=False) is stopped at its first call; reset=True recovers."""
    guarded = agent(
        [call("delete_account"), call("verify_identity", customer_id="C1"), *TURN_1],
        stop={"delete_account"},
    )
    with pytest.raises(RunStopped):
        guarded.run("delete")
    with pytest.raises(RunStopped) as caught:
        guarded.run("verify me", reset=False)
    assert stopped_at(caught.value) == "verify_identity"
    assert guarded.run("verify me") == "verified"
    assert not guarded.agentguard.stopped
