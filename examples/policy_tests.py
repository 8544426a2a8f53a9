"""Policy tests: the refund spec's shipped cases pass; a wrong expectation shows a diff.

python examples/policy_tests.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from agentguard.cli.main import main as agentguard_cli

SPECS = Path(__file__).resolve().parents[1] / "specs"


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    spec = str(SPECS / "refund.ltl")
    print("shipped cases:")
    shipped = agentguard_cli(["test", spec, str(SPECS / "refund.cases.json")])

    wrong = out_dir / "wrong.cases.json"
    refund = {"tool": "issue_refund", "args": {"order_id": "A1", "amount": 40}}
    wrong.write_text(
        json.dumps(
            {"cases": [{"name": "refund first (wrong)", "calls": [refund | {"expect": "allow"}]}]}
        ),
        encoding="utf-8",
    )
    print("a wrong expectation:")
    failing = agentguard_cli(["test", spec, str(wrong)])
    print("exit codes:", shipped, failing)
    return 0 if (shipped, failing) == (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
