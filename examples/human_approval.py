"""Human approval (the ASK severity): a refund above the cap is put to an approver.

The approver here is a function standing in for a human (a Slack prompt, a ticket, a
LangGraph interrupt): it approves the first large refund and denies the second.

    python examples/human_approval.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import agentguard
from agentguard.enforcement.approval import Approval, ApprovalRequest
from agentguard.enforcement.firewall import Firewall

SPEC = """
spec refunds
constraint big_refund severity ASK
    message "Refunds above 500 need a human."
  := G !issue_refund(amount > 500)
"""


def approver(request: ApprovalRequest) -> Approval:
    amount = request.args["amount"]
    print(f"approver asked: {request.tool}({dict(request.args)})")
    if amount < 1000:
        return Approval(True, by="alice", reason="regular customer")
    return Approval(False, by="alice", reason="over 1000 needs a manager")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    fw = Firewall(agentguard.parse_spec(SPEC), approver=approver, log_path=log)
    for amount in (40, 900, 2000):
        d = fw.propose("issue_refund", {"order_id": "A1", "amount": amount})
        print(f"refund {amount}: {d.action.value}", d.message.splitlines()[-1] if d.message else "")
        if d.executes:
            fw.complete(d, {"refunded": amount})
    fw.finish()
    print("decision log, read with json:")
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["event"] == "agentguard.decision":
            print("  ", record["action"], record.get("approval"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
