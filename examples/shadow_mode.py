"""Roll a policy out in shadow mode: every decision is made and logged, nothing is refused.

The scripted model refunds before verifying the customer. In shadow mode the refund runs
anyway; the decision log says enforce mode would have blocked it (``"action": "block",
"shadow": true``) and the report lists it under ``would_block``.

    python examples/shadow_mode.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from smolagents import ToolCallingAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.smolagents_models import ScriptedModel, call

SPEC = """
spec refunds
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
    model = ScriptedModel(
        [
            call("issue_refund", order_id="A1042", amount=129.9),  # no identity check
            call("final_answer", answer="Refunded 129.90 EUR."),
        ]
    )
    agent = ToolCallingAgent(tools=[verify_identity, issue_refund], model=model, verbosity_level=0)
    agent = guard(agent, agentguard.parse_spec(SPEC), log_path=log, mode="shadow")

    print("answer:", agent.run("Refund order A1042 for customer C-77."))
    report = agent.agentguard.report
    assert report is not None
    print("executed:", " -> ".join(report.trace.names))
    for d in report.would_block:
        print(f"would {d.shadow.value if d.shadow else '?'}: {d.tool}({dict(d.args)})")
    print("compliance:", report.compliance.score, report.compliance.label)
    print("decision log, read with json:")
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in ("event", "action", "tool", "shadow") if k in record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
