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

import sys
import tempfile
from pathlib import Path

from smolagents import ToolCallingAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.printout import print_run
from agentguard.testing.refund_desk import RefundDesk, refund_before_verifying
from agentguard.testing.smolagents_models import ScriptedModel, call

SPEC = Path(__file__).with_name("refunds.ltl")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    tools = [tool(f) for f in RefundDesk().tools()]  # verify_identity, issue_refund
    model = ScriptedModel(  # refunds first, is blocked, verifies, refunds
        refund_before_verifying(call("final_answer", answer="Refunded 129.90 EUR."))
    )
    agent = ToolCallingAgent(tools=tools, model=model, verbosity_level=0)
    agent = guard(agent, agentguard.load_spec(SPEC), log_path=log)  # <- the one line

    print("answer:", agent.run("Refund order A1042 for customer C-77."))
    session = agent.agentguard
    print_run(session.attempts, session.trace, session.compliance, session.log_path or log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
