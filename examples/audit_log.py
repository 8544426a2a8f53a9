"""A tamper-evident decision log: write one with an HMAC key, verify it, tamper, verify
again; then cut a run's end (a call refused after it finished), which only the anchored
heads show.

python examples/audit_log.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import agentguard
from agentguard.cli.main import main as agentguard_cli
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.log_anchor import HeadFile

SPEC = """
spec refunds
constraint identity_first severity SOFT_BLOCK
  := G(issue_refund -> O verify_identity)
"""
KEY = "example-secret"


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    heads = out_dir / "witness" / "heads.jsonl"  # in real use: where the agent cannot write
    fw = Firewall(
        agentguard.parse_spec(SPEC), log_path=log, log_key=KEY, log_anchor=HeadFile(heads)
    )
    print("refund first:", fw.propose("issue_refund", {"order_id": "A1"}).action.value)
    for name, args in (("verify_identity", {"customer_id": "C-7"}), ("issue_refund", {})):
        fw.complete(fw.propose(name, args), {"ok": True})
    fw.finish()
    print("refund after the end:", fw.propose("issue_refund", {"order_id": "A2"}).action.value)

    print("verify the log as written:")
    verify = ["audit", "verify", str(log), "--key", KEY, "--require-finish"]
    intact = agentguard_cli([*verify, "--heads", str(heads)])
    print("exit", intact)

    lines = log.read_text(encoding="utf-8").splitlines()
    print("cut the late refusal (the last line), verify without and with the heads:")
    log.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    unanchored, anchored = agentguard_cli(verify), agentguard_cli([*verify, "--heads", str(heads)])
    print("exit", unanchored, "then", anchored)

    lines[0] = lines[0].replace('"action":"block"', '"action":"allow"')  # hide the block
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("verify after hiding the block:")
    tampered = agentguard_cli(["audit", "verify", str(log), "--key", KEY])
    print("exit", tampered)
    return 0 if (intact, tampered, unanchored, anchored) == (0, 1, 0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
