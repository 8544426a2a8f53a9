"""Time hostile regular expressions through the firewall's matching path.

Run: ``python benchmarks/regex_cost.py``. Prints the time of one ``~`` test of
``/^(a+)+$/`` (catastrophic backtracking for Python's ``re``) on arguments of growing
size; the goal is a 10 kB argument in at most 10 ms (issue 11).
"""

from __future__ import annotations

import time

from agentguard.language import parse_spec
from agentguard.scoring import verify_trace

SPEC = "constraint no_runs := G !write(text ~ /^(a+)+$/)"


def main() -> None:
    spec = parse_spec(SPEC)
    for size in (27, 1_000, 10_000, 100_000):
        text = "a" * (size - 1) + "!"
        trace = [{"name": "write", "args": {"text": text}}]
        verify_trace(trace, spec)  # warm: compile once
        t0 = time.perf_counter()
        report = verify_trace(trace, spec)
        ms = (time.perf_counter() - t0) * 1000
        print(f"{size:>7} chars: {ms:8.3f} ms  passed={report.passed}")


if __name__ == "__main__":
    main()
