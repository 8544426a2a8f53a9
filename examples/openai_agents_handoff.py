"""Guard an OpenAI Agents SDK agent that hands off to another one.

``agentguard.guard(triage, spec)`` guards the triage agent and the billing agent it hands
off to, with one firewall per run. Billing's model tries the refund before the customer
was verified: agentguard's tool input guardrail rejects it (the function never runs, the
model reads why), the model verifies, the refund runs. The models are scripted
(``agents.Model`` replaying responses), so this runs offline, without a key.

    python examples/openai_agents_handoff.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled

import agentguard
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call, if_observed

SPEC = """
spec refunds
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity(result.verified = true))
"""


@function_tool
def verify_identity(customer_id: str) -> dict[str, Any]:
    """Check the customer's identity."""
    return {"customer_id": customer_id, "verified": True}


@function_tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount:.2f} EUR on {order_id}"


def build() -> Agent[Any]:
    refund = call("issue_refund", order_id="A1042", amount=129.9)
    billing = Agent(
        name="billing",
        instructions="Handle refunds.",
        tools=[verify_identity, issue_refund],
        model=ScriptedAgentsModel(
            [
                refund,  # the mistake
                if_observed("blocked", call("verify_identity", customer_id="C-77"), refund),
                refund,  # the correction
                "Refunded 129.90 EUR.",
            ]
        ),
    )
    return Agent(
        name="triage",
        instructions="Route the customer.",
        handoffs=[billing],
        model=ScriptedAgentsModel([call("transfer_to_billing")]),  # a handoff, not a tool call
    )


def main(out_dir: Path | None = None) -> int:
    set_tracing_disabled(True)  # the SDK would export its traces to OpenAI
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    triage = agentguard.guard(build(), agentguard.parse_spec(SPEC), log_path=log)

    result = asyncio.run(Runner.run(triage, "Refund order A1042 for customer C-77."))
    print("answer:", result.final_output, "| answered by:", result.last_agent.name)
    report = triage.agentguard.report
    for decision in report.decisions:
        print(f"  {decision.action.value:>8}  {decision.tool}({dict(decision.args)})")
    print("executed:", " -> ".join(report.trace.names))
    print("compliance:", report.compliance.score, report.compliance.label)

    print(f"decision log {log}, read with json:")
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in ("event", "action", "tool") if k in record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
