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
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled

import agentguard
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call
from agentguard.testing.printout import print_run
from agentguard.testing.refund_desk import RefundDesk, refund_before_verifying

SPEC = """
spec refunds
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity(result.verified = true))
"""


def build() -> Agent[Any]:
    billing = Agent(
        name="billing",
        instructions="Handle refunds.",
        tools=[function_tool(f) for f in RefundDesk().tools()],  # verify_identity, issue_refund
        model=ScriptedAgentsModel(refund_before_verifying("Refunded 129.90 EUR.")),
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
    print_run(report.decisions, report.trace, report.compliance, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
