"""A tamper-evident decision log: write one with an HMAC key, verify it, tamper, verify again.

python examples/audit_log.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import agentguard
from agentguard.cli.main import main as agentguard_cli
from agentguard.enforcement.firewall import Firewall

SPEC = """
spec refunds
constraint identity_first severity SOFT_BLOCK
  := G(issue_refund -> O verify_identity)
"""
KEY = "example-secret"


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    fw = Firewall(agentguard.parse_spec(SPEC), log_path=log, log_key=KEY)
    print("refund first:", fw.propose("issue_refund", {"order_id": "A1"}).action.value)
    for name, args in (("verify_identity", {"customer_id": "C-7"}), ("issue_refund", {})):
        fw.complete(fw.propose(name, args), {"ok": True})
    fw.finish()

    print("verify the log as written:")
    intact = agentguard_cli(["audit", "verify", str(log), "--key", KEY, "--require-finish"])
    print("exit", intact)

    lines = log.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"action":"block"', '"action":"allow"')  # hide the block
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("verify after hiding the block:")
    tampered = agentguard_cli(["audit", "verify", str(log), "--key", KEY])
    print("exit", tampered)
    return 0 if (intact, tampered) == (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
