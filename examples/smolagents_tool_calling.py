"""Guard a smolagents ToolCallingAgent in one line.

The scripted model tries to refund before verifying the customer; agentguard blocks
the call (it never runs), the model reads why, verifies, and refunds. Afterwards the
decision log is read back with nothing but the standard library.

    python examples/smolagents_tool_calling.py

To drive it with a real model instead, replace ``ScriptedModel(...)`` with any smolagents
model, e.g. an OpenAI-compatible local server:
``OpenAIServerModel(model_id="qwen2.5", api_base="http://localhost:8000/v1", api_key="-")``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from smolagents import ToolCallingAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.smolagents_models import ScriptedModel, call, if_observed

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
    """Check the customer's identity.

    Args:
        customer_id: The customer's id.
    """
    return json.dumps({"customer_id": customer_id, "verified": True})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order.

    Args:
        order_id: The order number.
        amount: The amount in EUR.
    """
    return json.dumps({"order_id": order_id, "refunded": amount})


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    refund = call("issue_refund", order_id="A1042", amount=129.9)
    model = ScriptedModel(
        [
            refund,  # the mistake: no identity check first
            if_observed("BLOCKED", call("verify_identity", customer_id="C-77"), refund),
            refund,  # the correction: same refund, now allowed
            call("final_answer", answer="Refunded 129.90 EUR."),
        ]
    )
    agent = ToolCallingAgent(tools=[verify_identity, issue_refund], model=model, verbosity_level=0)
    agent = guard(agent, agentguard.parse_spec(SPEC), log_path=log)  # <- the one line

    print("answer:", agent.run("Refund order A1042 for customer C-77."))
    session = agent.agentguard
    for decision in session.attempts:
        print(f"  {decision.action.value:>8}  {decision.tool}({dict(decision.args)})")
    print("executed:", " -> ".join(session.trace.names))
    print("compliance:", session.compliance.score, session.compliance.label)

    print(f"decision log {session.log_path}, read with json:")
    for line in Path(session.log_path or log).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in ("event", "action", "tool") if k in record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
