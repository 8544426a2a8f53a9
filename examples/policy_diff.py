"""Review a policy change: replay a recorded run under the old and the new spec.

The new spec forbids emails outright; the recorded run sent one, so its decision and its
score change.

    python examples/policy_diff.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from agentguard.cli.main import main as agentguard_cli

SPECS = Path(__file__).resolve().parents[1] / "specs"


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    old = SPECS / "refund.ltl"
    new = out_dir / "refund_no_emails.ltl"
    new.write_text(
        old.read_text(encoding="utf-8")
        + "\nconstraint no_emails severity HARD_STOP := G !send_email\n",
        encoding="utf-8",
    )
    run = SPECS / "traces" / "refund.pass.json"
    code = agentguard_cli(["diff", str(old), str(new), str(run)])
    print("exit", code)
    return 0 if code == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
