"""smolagents ``run(stream=True)``: a streamed run's steps run under its own run only.

Another ``run`` of the agent begun while a stream is paused ends that stream's run. Before,
the paused stream, resumed, ran its tools under the newer run's firewall (its refund was
allowed on the newer run's identity check, and recorded in that run), and closing it
finished the newer run, whose every call was then refused (outside attack round 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentguard.integrations.smolagents import StreamSupersededError
from smolagents import CodeAgent, tool

import agentguard
from agentguard.testing.refund_desk import RefundDesk
from agentguard.testing.smolagents_models import ScriptedModel

SPEC = Path(__file__).resolve().parents[3] / "examples" / "refunds.ltl"


def _agent(tmp_path: Path, script: list[str]) -> tuple[Any, RefundDesk]:
    desk = RefundDesk()
    agent = CodeAgent(
        tools=[tool(f) for f in desk.tools()],
        model=ScriptedModel(script),
        verbosity_level=0,
        max_steps=3,
    )
    return agentguard.guard(agent, str(SPEC), log_path=tmp_path / "log.jsonl"), desk


def _steps(stream: Any) -> list[Any]:
    return [step for step in stream if type(step).__name__ in ("ActionStep", "FinalAnswerStep")]


def test_a_paused_stream_resumed_after_another_run_began_runs_nothing(tmp_path: Path) -> None:
    agent, desk = _agent(
        tmp_path,
        [
            "x = 1",  # run A, step 1
            'print(verify_identity(customer_id="C-77"))',  # run B: the identity check
            'final_answer("B done")',
            'issue_refund(order_id="A1042", amount=129.9)',  # run A, resumed
        ],
    )
    first = agent.run("task A", stream=True)
    next(step for step in first if type(step).__name__ == "ActionStep")
    second = _steps(agent.run("task B", stream=True))
    assert second[-1].output == "B done"
    with pytest.raises(StreamSupersededError):
        next(first)
    assert desk.refunded == []  # never judged by run B's firewall, never run
    report = agent.agentguard.report
    assert report is not None
    assert [c.name for c in report.trace if c.is_tool] == ["verify_identity", "final_answer"]


def test_dropping_a_stream_does_not_end_the_next_run(tmp_path: Path) -> None:
    """``gen = agent.run(...); next(gen); gen = agent.run(...)``: rebinding closes the old
    stream, which finishes its own run, not the one just begun."""
    agent, _ = _agent(
        tmp_path, ["x = 1", 'print(verify_identity(customer_id="C-77"))', 'final_answer("ok")']
    )
    stream = agent.run("first", stream=True)
    next(step for step in stream if type(step).__name__ == "ActionStep")
    stream = agent.run("second", stream=True)  # the first stream is closed here
    steps = _steps(stream)
    assert steps[-1].output == "ok"
    assert all(getattr(step, "error", None) is None for step in steps)
    report = agent.agentguard.report
    assert report is not None and not report.stopped
