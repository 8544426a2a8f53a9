"""Guard a LangChain v1 ``create_agent`` agent with one middleware.

The scripted chat model refunds before verifying; the middleware answers the call with
``ToolMessage(status="error")`` instead of running it, the model verifies and refunds.
The decision log is read back with ``json``.

    python examples/langchain_create_agent.py

With a real model: ``create_agent("openai:gpt-4o-mini", ...)`` or any chat model that
supports ``bind_tools`` (e.g. ``ChatOpenAI(base_url="http://localhost:8000/v1")``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from agentguard.integrations.langchain import AgentGuardMiddleware
from langchain.agents import create_agent
from langchain_core.tools import tool

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel
from agentguard.testing.printout import print_decision_log, print_outcome
from agentguard.testing.refund_desk import RefundDesk, refund_before_verifying

SPEC = Path(__file__).with_name("refunds.ltl")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    tools = [tool(f) for f in RefundDesk().tools()]  # verify_identity, issue_refund
    model = ScriptedChatModel(refund_before_verifying("Refunded 129.90 EUR."))  # errs once
    guard = AgentGuardMiddleware(agentguard.load_spec(SPEC), log_path=log)
    agent = create_agent(model, tools, middleware=[guard])

    out = agent.invoke({"messages": [("user", "Refund order A1042 for customer C-77.")]})
    for message in out["messages"]:
        status = getattr(message, "status", "")
        print(f"  {message.type:>5} {status:>7}  {str(message.content)[:90]}")
    session = guard.agentguard
    print_outcome(session.trace, session.compliance)
    print_decision_log(session.log_path or log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
