"""Guard a smolagents CodeAgent: a blocked call raises inside the model's own code.

The scripted model writes code that refunds before verifying; the call raises
``ToolCallBlocked`` at that line (nothing after it runs, nothing is refunded), the model
reads the error and writes corrected code. The log is read back with ``json``.

    python examples/smolagents_code_agent.py

A real model works the same way: pass any smolagents model instead of ``ScriptedModel``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from smolagents import CodeAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.printout import print_run
from agentguard.testing.refund_desk import RefundDesk
from agentguard.testing.smolagents_models import ScriptedModel, if_observed

SPEC = Path(__file__).with_name("refunds.ltl")

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
    desk = RefundDesk()  # records the refunds that really ran
    model = ScriptedModel([MISTAKE, if_observed("BLOCKED", CORRECTION, "final_answer('?')")])
    agent = CodeAgent(tools=[tool(f) for f in desk.tools()], model=model, verbosity_level=0)
    agent = guard(agent, agentguard.load_spec(SPEC), log_path=log)  # <- the one line

    print("answer:", agent.run("Refund order A1042 for customer C-77."))
    print("refunds actually issued:", desk.refunded)
    session = agent.agentguard
    print_run(session.attempts, session.trace, session.compliance, session.log_path or log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
