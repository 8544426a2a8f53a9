"""smolagents agents guarded by spec text (parsed anew for every run, so each run's
firewall finds its prototype by content) decide as each would alone, interleaved."""

from __future__ import annotations

from typing import Any

from smolagents import ToolCallingAgent, tool

from agentguard.guard import guard
from agentguard.language import parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.testing.smolagents_models import ScriptedModel, call


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def verify_identity(customer_id: str) -> str:
    """Verify the customer's identity.

    Args:
        customer_id: The customer.
    """
    return f"verified {customer_id}"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str) -> str:
    """Issue a refund.

    Args:
        order_id: The order id.
    """
    return f"refunded {order_id}"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def delete_account() -> str:
    """Delete the customer's account."""
    return "deleted"


VERIFY_FIRST = """
constraint verify_first := G(issue_refund -> O verify_identity)
"""
NO_DELETE = """
constraint no_delete weight 2 := G !delete_account
constraint refund_once := G(issue_refund -> N G !issue_refund)
"""
RUN = [
    call("issue_refund", order_id="A1"),
    call("verify_identity", customer_id="C1"),
    call("issue_refund", order_id="A2"),
    call("delete_account"),
    call("final_answer", answer="done"),
]
RUNS = 3


def agent(tools: list[Any], spec_text: str) -> Any:
    plain = ToolCallingAgent(
        tools=tools, model=ScriptedModel(RUN * RUNS), verbosity_level=-1, max_steps=8
    )
    return guard(plain, spec_text)


def configs() -> list[Any]:
    return [
        agent([verify_identity, issue_refund], VERIFY_FIRST),
        agent([issue_refund, delete_account, verify_identity], NO_DELETE),
    ]


def outcome(guarded: Any) -> tuple[Any, ...]:
    session = guarded.agentguard
    report = session.report
    attempts = tuple(
        (d.action.value, d.tool, tuple(v.constraint for v in d.violations))
        for d in session.attempts
    )
    return attempts, report.compliance.compliance_score, report.trace.names


def test_interleaved_agents_with_specs_parsed_per_run_decide_as_each_alone() -> None:
    """Two agents of different tools and specs, runs alternated: every run's decisions,
    trace and score are those of the same agent run alone, and each report is the
    offline verdict of its trace."""
    alone = []
    for guarded in configs():
        runs = []
        for _ in range(RUNS):
            guarded.run("task")
            runs.append(outcome(guarded))
        alone.append(runs)
    together = configs()
    got: list[list[Any]] = [[], []]
    for _ in range(RUNS):
        for k, guarded in enumerate(together):
            guarded.run("task")
            got[k].append(outcome(guarded))
            report = guarded.agentguard.report
            spec = parse_spec((VERIFY_FIRST, NO_DELETE)[k])
            assert report.compliance == verify_trace(report.trace, spec)
    assert got == alone
    refused = [{tool for _, tool, violated in runs[0][0] if violated} for runs in got]
    assert refused == [{"issue_refund"}, {"issue_refund", "delete_account"}]
