"""A call that ran enters the trace whatever its result or error is: one whose
``__str__`` (and ``__repr__``) raises is kept as the text that can be said of it, never
dropped (it was: the call left the in-flight set, never entered the trace, the log had no
result line, and "at most one refund" let a second refund run)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from agents import Agent, Runner
from smolagents import ToolCallingAgent, tool

from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.firewall import Firewall
from agentguard.guard import guard
from agentguard.language import parse_spec
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call
from agentguard.testing.smolagents_models import ScriptedModel
from agentguard.testing.smolagents_models import call as smol_call
from tests.adversarial._openai_agents import function_tool, sdk_defaults

SPEC = parse_spec("constraint one_refund severity HARD_STOP := CalledN(issue_refund, 1, <=)")
__all__ = ["sdk_defaults"]  # the OpenAI tests' fixture: no trace export, our own loop


class Receipt:
    """A payment SDK's receipt whose text needs a field that is not loaded."""

    def __str__(self) -> str:
        raise RuntimeError("receipt not loaded")

    __repr__ = __str__


class PaymentError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("error text not loaded")


def _events(log: Path) -> list[tuple[str, Any]]:
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [(d["event"].split(".")[1], d.get("tool")) for d in lines]


def test_the_core_keeps_a_call_whose_result_or_error_cannot_be_shown(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    fw = Firewall(SPEC, log_path=log, keep_trace=True)
    first = fw.start(fw.propose("issue_refund", {"order_id": "A1"}))
    fw.complete(first, Receipt())
    assert fw.propose("issue_refund", {"order_id": "A1"}).executes is False  # counted
    report = fw.finish()
    (ran,) = report.trace
    assert "Receipt" in str(ran.result) and "cannot be shown" in str(ran.result)
    assert _events(log)[:2] == [("decision", "issue_refund"), ("result", "issue_refund")]
    assert verify_lines(log.read_text().splitlines(), require_finish=True).ok

    fw = Firewall(SPEC, keep_trace=True)
    fw.complete(fw.start(fw.propose("issue_refund", {"order_id": "A1"})), error=PaymentError())
    (failed,) = fw.finish().trace
    assert failed.error and failed.result == "Error: PaymentError: PaymentError()"  # its repr


REFUNDS: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str) -> Any:
    """Refund an order.

    Args:
        order_id: The order.
    """
    REFUNDS.append(order_id)
    return Receipt()


def test_smolagents_a_refund_with_an_unshowable_receipt_is_in_the_trace(tmp_path: Path) -> None:
    REFUNDS.clear()
    turns = [smol_call("issue_refund", order_id="A1")] * 3 + [smol_call("final_answer", answer="x")]
    agent = ToolCallingAgent(
        tools=[issue_refund], model=ScriptedModel(turns), max_steps=5, verbosity_level=-1
    )
    guard(agent, SPEC, log_path=tmp_path / "d.jsonl")
    with contextlib.suppress(Exception):  # smolagents' own rendering of the result raises
        agent.run("refund A1")
    assert REFUNDS == ["A1"]
    assert [c.name for c in agent.agentguard.trace] == ["issue_refund"]


def test_openai_agents_a_call_with_an_unshowable_result_is_recorded_as_ran(
    tmp_path: Path,
) -> None:
    refunds: list[str] = []

    @function_tool
    def issue_refund(order_id: str) -> Receipt:
        """Refund an order."""
        refunds.append(order_id)
        return Receipt()

    model = ScriptedAgentsModel([call("issue_refund", order_id="A1"), "done"])
    agent: Any = Agent(name="support", instructions="help", tools=[issue_refund], model=model)
    guard(agent, SPEC, log_path=tmp_path / "d.jsonl")
    with contextlib.suppress(Exception):  # the SDK's own rendering of the result raises
        Runner.run_sync(agent, "refund A1")
    agent.agentguard.finish_running()
    assert refunds == ["A1"]
    report = agent.agentguard.report
    assert report is not None
    assert [c.name for c in report.trace] == ["issue_refund"]
    assert ("withdrawn", "issue_refund") not in _events(tmp_path / "d.jsonl")
