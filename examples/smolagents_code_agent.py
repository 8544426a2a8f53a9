"""Guard a smolagents CodeAgent: a blocked call raises inside the model's own code.

The scripted model writes code that refunds before verifying; the call raises
``ToolCallBlocked`` at that line (nothing after it runs, nothing is refunded), the model
reads the error and writes corrected code. The log is read back with ``json``.

    python examples/smolagents_code_agent.py

A real model works the same way: pass any smolagents model instead of ``ScriptedModel``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from smolagents import CodeAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.smolagents_models import ScriptedModel, if_observed

SPEC = """
spec refunds
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str, amount: number)
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)
"""

REFUNDS: list[str] = []


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
    REFUNDS.append(order_id)
    return json.dumps({"order_id": order_id, "refunded": amount})


MISTAKE = """
result = issue_refund("A1042", 129.9)   # positional arguments are fine
print(result)
"""
CORRECTION = """
print(verify_identity(customer_id="C-77"))
print(issue_refund("A1042", 129.9))
final_answer("Refunded 129.90 EUR.")
"""


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    model = ScriptedModel([MISTAKE, if_observed("BLOCKED", CORRECTION, "final_answer('?')")])
    agent = CodeAgent(tools=[verify_identity, issue_refund], model=model, verbosity_level=0)
    agent = guard(agent, agentguard.parse_spec(SPEC), log_path=log)  # <- the one line

    print("answer:", agent.run("Refund order A1042 for customer C-77."))
    print("refunds actually issued:", REFUNDS)
    session = agent.agentguard
    for decision in session.attempts:
        print(f"  {decision.action.value:>8}  {decision.tool}({dict(decision.args)})")
    print("compliance:", session.compliance.score, session.compliance.label)

    print(f"decision log {session.log_path}, read with json:")
    for line in Path(session.log_path or log).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in ("event", "action", "tool") if k in record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
