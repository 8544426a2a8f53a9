"""Guard a LangChain v1 ``create_agent`` agent with one middleware.

The scripted chat model refunds before verifying; the middleware answers the call with
``ToolMessage(status="error")`` instead of running it, the model verifies and refunds.
The decision log is read back with ``json``.

    python examples/langchain_create_agent.py

With a real model: ``create_agent("openai:gpt-4o-mini", ...)`` or any chat model that
supports ``bind_tools`` (e.g. ``ChatOpenAI(base_url="http://localhost:8000/v1")``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from agentguard.integrations.langchain import AgentGuardMiddleware
from langchain.agents import create_agent
from langchain_core.tools import tool

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel, call, if_observed

SPEC = """
spec refunds
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str, amount: number)
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)
"""


@tool
def verify_identity(customer_id: str) -> str:
    """Check the customer's identity."""
    return json.dumps({"customer_id": customer_id, "verified": True})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return json.dumps({"order_id": order_id, "refunded": amount})


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    refund = call("issue_refund", order_id="A1042", amount=129.9)
    model = ScriptedChatModel(
        [
            refund,  # the mistake
            if_observed("BLOCKED", call("verify_identity", customer_id="C-77"), refund),
            refund,  # the correction
            "Refunded 129.90 EUR.",
        ]
    )
    guard = AgentGuardMiddleware(agentguard.parse_spec(SPEC), log_path=log)
    agent = create_agent(model, [verify_identity, issue_refund], middleware=[guard])

    out = agent.invoke({"messages": [("user", "Refund order A1042 for customer C-77.")]})
    for message in out["messages"]:
        status = getattr(message, "status", "")
        print(f"  {message.type:>5} {status:>7}  {str(message.content)[:90]}")
    session = guard.agentguard
    print("executed:", " -> ".join(session.trace.names))
    print("compliance:", session.compliance.score, session.compliance.label)

    print(f"decision log {session.log_path}, read with json:")
    for line in Path(session.log_path or log).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in ("event", "action", "tool") if k in record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
