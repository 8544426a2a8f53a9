"""Tell the model what may run now, before it acts (``offer="narrow"``).

The firewall answers from its monitor's state which tools are refused now, which run
only under argument conditions, and what is left to do before finishing
(``Firewall.permissions``). With ``offer="narrow"`` the LangChain middleware binds only
the tools not refused for each model call and adds that note to the system message:
before the identity check the model is not offered ``issue_refund``, so it verifies
first; no call is refused. Every call is still checked. Last, a call no constraint
refuses that would still leave no compliant end (``doomed``): a refund before the
manager's sign-off uses up "at most one refund" while the procedure still owes one after
the sign-off.

    python examples/what_may_run.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from agentguard.integrations.langchain import AgentGuardMiddleware
from langchain.agents import create_agent
from langchain_core.tools import tool

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel, call
from agentguard.testing.printout import print_decision_log
from agentguard.testing.refund_desk import RefundDesk

SPEC = Path(__file__).with_name("refunds.ltl")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    spec = agentguard.load_spec(SPEC)

    # the answer itself, on a firewall of the spec, before any call
    fw = agentguard.Firewall(spec)
    print(fw.permissions().describe())

    tools = [tool(f) for f in RefundDesk().tools()]  # verify_identity, issue_refund
    model = ScriptedChatModel(
        [
            call("verify_identity", customer_id="C-77"),
            call("issue_refund", order_id="A1042", amount=129.9),
            "Refunded 129.90 EUR.",
        ]
    )
    guard = AgentGuardMiddleware(spec, log_path=log, offer="narrow")
    agent = create_agent(model, tools, middleware=[guard])
    agent.invoke({"messages": [("user", "Refund order A1042 for customer C-77.")]})
    for turn, offered in enumerate(model.bound_tools, 1):
        print(f"turn {turn}: offered {', '.join(offered)}")
    refused = [d for d in guard.agentguard.attempts if not d.executes]
    print(f"refused calls: {len(refused)}")
    print_decision_log(guard.agentguard.log_path or log, ("event", "action", "tool"))

    # allowed now, but dooming the run: the refund must come after the sign-off and
    # may come once, so a refund before the sign-off leaves no compliant end
    doomed = agentguard.Firewall(agentguard.parse_spec(DOOMED))
    answer = doomed.permissions(["sign_off", "issue_refund"])
    print(f"issue_refund: {answer['issue_refund'].status}, doomed: {answer['issue_refund'].doomed}")
    print(answer.describe())
    return 0


DOOMED = """
constraint refund_after_sign_off severity SOFT_BLOCK := F(sign_off & F issue_refund)
constraint one_refund severity SOFT_BLOCK := CalledN(issue_refund, 1, <=)
"""


if __name__ == "__main__":
    sys.exit(main())
