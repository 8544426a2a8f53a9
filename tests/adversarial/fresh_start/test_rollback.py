"""A state saved before its run went on and ended cannot continue that run (found by an
outside attacker): restoring it rolled the run's counts back under the same run id, so a
once-only call ran twice, the live report said 1.0 while the log checked FAIL, and
``audit verify`` saw a chain restart. The restore is refused, naming the finish line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agentguard.integrations.langchain import AgentGuardMiddleware
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import agentguard
from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.firewall import Firewall, FirewallStateError
from agentguard.testing.langchain_models import ScriptedChatModel, call

SPEC = agentguard.parse_spec("constraint once severity HARD_STOP := CalledN(pay, 1, <=)")


def test_a_state_from_before_the_end_does_not_restore(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    fw = Firewall(SPEC, keep_trace=True, log_path=log)
    early = fw.save()
    d = fw.start(fw.propose("pay", {"a": 1}))
    fw.complete(d, "ok")
    fw.finish()
    with pytest.raises(FirewallStateError, match=r"ended in .* after this state was saved"):
        Firewall.restore(SPEC, early, log_path=log)
    assert verify_lines(log.read_text().splitlines(), require_finish=True).ok


def test_a_state_saved_at_the_end_continues(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    fw = Firewall(SPEC, keep_trace=True, log_path=log)
    d = fw.start(fw.propose("pay", {"a": 1}))
    fw.complete(d, "ok")
    late = fw.save()
    again = Firewall.restore(SPEC, late, log_path=log)
    assert not again.propose("pay", {"a": 2}).executes  # the count went on


def test_a_thread_forked_from_before_a_call_cannot_run_it_again(tmp_path: Path) -> None:
    ran: list[int] = []

    @tool
    def pay(amount: int) -> str:
        """pay"""
        ran.append(amount)
        return "paid"

    model = ScriptedChatModel([[call("pay", amount=1)], "done", [call("pay", amount=2)], "x"])
    guard = AgentGuardMiddleware(SPEC, log_path=tmp_path / "d.jsonl")
    agent = create_agent(model, [pay], middleware=[guard], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [("user", "pay once")]}, config)
    fork = next(h for h in agent.get_state_history(config) if h.next == ("tools",))
    with pytest.raises(FirewallStateError):
        agent.invoke({"messages": [("user", "pay again")]}, fork.config)
    assert ran == [1]
