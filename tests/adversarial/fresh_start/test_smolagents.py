"""smolagents: a call after its run ended is refused by that run, never judged by a fresh
firewall; ``run(reset=False)`` continues the same run (issue 25, 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action, RunStopped
from tests.adversarial._smolagents_support import (
    RAN,
    ToolCallBlocked,
    assert_invariants,
    code_agent,
    log_lines,
    observed,
)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def test_a_lazy_map_left_behind_runs_no_tool_after_the_run(tmp_path: Path) -> None:
    """Model code leaves a lazy ``map`` of refunds in a variable; consumed after the run
    ended, its call is refused by the finished run and logged on its chain (it used to
    start a fresh firewall, which had forgotten the first refund, and refund again)."""
    agent = code_agent(["refund('A')\nlater = map(refund, ['B'])\nfinal_answer('done')"], tmp_path)
    agent.run("refund A")
    session = agent.agentguard
    report = session.report
    with pytest.raises(ToolCallBlocked, match="already ended"):
        list(agent.python_executor.state["later"])
    assert RAN == [("refund", {"order_id": "A"})]
    last = log_lines(session)[-1]
    assert last["action"] == Action.BLOCK.value and last["tool"] == "refund"
    assert last["run_id"] == report.run_id
    assert session.report is report  # the run's report was not replaced
    assert verify_lines(session.log_path.read_text().splitlines(), require_finish=True).ok
    assert_invariants(session, tmp_path)


def test_a_lazy_map_as_the_final_answer_is_refused(tmp_path: Path) -> None:
    """A lazy ``map`` of tool calls handed back as the final answer would run its calls
    when the caller reads the answer, after the run; the answer is refused (it cannot be
    checked), the model answers again, and no refund ran."""
    agent = code_agent(
        ["final_answer(map(refund, ['A', 'B']))", "final_answer('no refunds')"], tmp_path
    )
    assert agent.run("refund") == "no refunds"
    assert RAN == []
    assert "final_answer" in observed(agent) and "agentguard" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_reset_false_continues_the_same_run(tmp_path: Path) -> None:
    """Turn 2 (``reset=False``) is the same run: same run id, the first refund counted
    (a second one is stopped by "at most one refund"), one chain over both turns."""
    agent = code_agent(["refund('A')\nfinal_answer('one')", "refund('B')"], tmp_path)
    agent.run("refund A")
    first = agent.agentguard.report
    with pytest.raises(RunStopped):
        agent.run("refund B too", reset=False)
    session = agent.agentguard
    assert RAN == [("refund", {"order_id": "A"})]
    assert session.report.run_id == first.run_id
    lines = log_lines(session)
    assert {line["run_id"] for line in lines} == {first.run_id}
    assert [line["seq"] for line in lines] == list(range(len(lines)))  # one chain, no restart
    assert verify_lines(session.log_path.read_text().splitlines(), require_finish=True).ok
    assert_invariants(session, tmp_path)


def test_a_stopped_run_continued_stays_stopped(tmp_path: Path) -> None:
    """After a HARD_STOP, ``run(reset=False)`` continues the stopped run: no tool runs."""
    agent = code_agent(["refund('A')\nrefund('B')", "refund('C')"], tmp_path)
    with pytest.raises(RunStopped):
        agent.run("refund")
    with pytest.raises(RunStopped):
        agent.run("again", reset=False)
    assert RAN == [("refund", {"order_id": "A"})]
    lines = log_lines(agent.agentguard)
    assert [line["seq"] for line in lines] == list(range(len(lines)))
    assert [line["action"] for line in lines if line["tool"] == "refund"][-1] == "stop"
    assert verify_lines(agent.agentguard.log_path.read_text().splitlines()).ok
    assert_invariants(agent.agentguard, tmp_path)
