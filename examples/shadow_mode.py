"""Roll a policy out in shadow mode: every decision is made and logged, nothing is refused.

The scripted model refunds before verifying the customer. In shadow mode the refund runs
anyway; the decision log says enforce mode would have blocked it (``"action": "block",
"shadow": true``) and the report lists it under ``would_block``.

    python examples/shadow_mode.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from smolagents import ToolCallingAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.printout import print_decision_log, print_outcome
from agentguard.testing.refund_desk import RefundDesk
from agentguard.testing.smolagents_models import ScriptedModel, call

SPEC = Path(__file__).with_name("refunds.ltl")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    model = ScriptedModel(
        [
            call("issue_refund", order_id="A1042", amount=129.9),  # no identity check
            call("final_answer", answer="Refunded 129.90 EUR."),
        ]
    )
    tools = [tool(f) for f in RefundDesk().tools()]
    agent = ToolCallingAgent(tools=tools, model=model, verbosity_level=0)
    agent = guard(agent, agentguard.load_spec(SPEC), log_path=log, mode="shadow")

    print("answer:", agent.run("Refund order A1042 for customer C-77."))
    report = agent.agentguard.report
    assert report is not None
    for d in report.would_block:
        print(f"would {d.shadow.value if d.shadow else '?'}: {d.tool}({dict(d.args)})")
    print_outcome(report.trace, report.compliance)
    print_decision_log(log, ("event", "action", "tool", "shadow"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
