"""Many calls of one parallel turn whose approvals rely on a sibling still in flight each
wait in ``Firewall.start`` for it. Awaited through the event loop's default executor,
the waiting starts took all of its threads (``min(32, cpus + 4)``), and the sibling they
waited for could not run its synchronous body on it: the turn stalled until
``start_timeout``, then refused the calls the spec allows (OpenAI Agents SDK; LangChain
under ``ainvoke``). Each waiting start now waits on a thread of its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agents import Runner as OpenAIRunner
from langchain.agents import create_agent
from langchain_core.tools import tool

from agentguard.language import parse_spec
from agentguard.testing.langchain_models import ScriptedChatModel
from agentguard.testing.langchain_models import call as lc_call
from agentguard.testing.openai_agents_models import call_with_id
from tests.adversarial._openai_agents import Shop, guarded, log_lines, scripted, sdk_defaults
from tests.integrations.adapters import AgentGuardMiddleware

__all__ = ["sdk_defaults"]  # the OpenAI tests' fixture: no trace export, our own loop
MANY = 16  # more than the default executor's threads on any machine of up to 12 cores
SPEC = parse_spec(
    "constraint id_first severity SOFT_BLOCK(99) := G(issue_refund -> O verify_identity)"
)


def _refused(log: Path) -> list[Any]:
    return [
        line
        for line in log_lines(log)
        if line["event"] == "agentguard.withdrawn"
        or (line["event"] == "agentguard.decision" and line["action"] != "allow")
    ]


def test_openai_agents_many_calls_waiting_for_one_sibling_all_run(tmp_path: Path) -> None:
    shop = Shop()
    turn = [call_with_id("v", "verify_identity", customer_id="c1")]
    turn += [call_with_id(f"r{i}", "issue_refund", order_id=f"A{i}", amount=1) for i in range(MANY)]
    agent = scripted(shop, [turn, "done"])
    log = tmp_path / "d.jsonl"
    guarded(agent, SPEC, log, start_timeout=20.0)
    OpenAIRunner.run_sync(agent, "refund them")
    assert [name for name, _ in shop.ran].count("issue_refund") == MANY
    assert _refused(log) == []


def test_langchain_ainvoke_many_calls_waiting_for_one_sibling_all_run(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    def verify_identity(customer_id: str) -> str:
        """Verify a customer."""
        ran.append("verify")
        return "ok"

    @tool
    def issue_refund(order_id: str) -> str:
        """Refund an order."""
        ran.append(order_id)
        return "refunded"

    turn = [lc_call("verify_identity", customer_id="c1")]
    turn += [lc_call("issue_refund", order_id=f"A{i}") for i in range(MANY)]
    log = tmp_path / "d.jsonl"
    guard = AgentGuardMiddleware(SPEC, log_path=log, start_timeout=20.0)
    agent = create_agent(
        ScriptedChatModel([turn, "done"]), [verify_identity, issue_refund], middleware=[guard]
    )
    asyncio.run(agent.ainvoke({"messages": [("user", "refund them")]}))
    assert len(ran) == MANY + 1
    assert _refused(log) == []
