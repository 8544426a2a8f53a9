"""One guarded ``create_agent`` agent serving several conversations, each with its own trace.

The agent is built once, with a checkpointer; every ``thread_id`` is a conversation. The
guard keeps one trace per invocation and stores the firewall state in the checkpoint, so
a conversation's next turn continues its trace:

* customer C-77 verifies in turn 1 and asks for the refund in turn 2: allowed, because
  the identity check of turn 1 is part of the same trace;
* customer C-78 asks for a refund straight away: blocked, although C-77 verified (other
  conversations never leak into a trace);
* a second worker (a fresh middleware and agent on the same checkpointer, as another
  process would be) picks up C-77's conversation where it was.

Invocations may run concurrently (threads, ``asyncio.gather`` of ``ainvoke``); they run
one after the other here only so that the scripted model's replies come in order.

    python examples/langchain_threads.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from agentguard.integrations.langchain import AgentGuardMiddleware
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel, call
from agentguard.testing.printout import print_decision_log, print_outcome
from agentguard.testing.refund_desk import RefundDesk

SPEC = Path(__file__).with_name("refunds.ltl")


def ask(agent: Any, thread: str, text: str) -> None:
    out = agent.invoke({"messages": [("user", text)]}, {"configurable": {"thread_id": thread}})
    refused = [m for m in out["messages"] if getattr(m, "status", "") == "error"]
    note = f"  ({len(refused)} call(s) blocked so far)" if refused else ""
    print(f"[{thread}] {text!r} -> {out['messages'][-1].content!r}{note}")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    spec = agentguard.load_spec(SPEC)
    tools = [tool(f) for f in RefundDesk().tools()]  # verify_identity, issue_refund
    saver = InMemorySaver()  # any LangGraph checkpointer (SQLite, Postgres) works the same
    model = ScriptedChatModel(
        [
            call("verify_identity", customer_id="C-77"),
            "You are verified.",
            call("issue_refund", order_id="A2000", amount=15.0),
            "I need to verify your identity first.",
            call("issue_refund", order_id="A1042", amount=129.9),
            "Refunded 129.90 EUR.",
        ]
    )
    guard = AgentGuardMiddleware(spec, log_path=log)
    agent = create_agent(model, tools, middleware=[guard], checkpointer=saver)

    ask(agent, "C-77", "I am customer C-77.")
    ask(agent, "C-78", "Refund order A2000 for customer C-78.")
    ask(agent, "C-77", "Refund order A1042.")

    for thread in ("C-77", "C-78"):
        session = guard.session_for(thread)
        if session is None or session.compliance is None:
            return 1
        print(
            f"{thread} decisions this turn:", [(d.action.value, d.tool) for d in session.attempts]
        )
        print_outcome(session.trace, session.compliance, prefix=f"{thread} ")

    worker = AgentGuardMiddleware(spec, log_path=log)  # another process, same checkpointer
    second = create_agent(
        ScriptedChatModel([call("issue_refund", order_id="A1043", amount=10.0), "Refunded."]),
        tools,
        middleware=[worker],
        checkpointer=saver,
    )
    ask(second, "C-77", "And order A1043, please.")
    resumed = worker.session_for("C-77")
    if resumed is None or resumed.compliance is None:
        return 1
    print_outcome(resumed.trace, resumed.compliance, prefix="second worker, C-77 ")
    print_decision_log(log, ("run_id", "action", "tool"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
