"""Print the paper's ToolSandbox sample: N offline scenarios, multi-label stratified.

Run: ``AGENTGUARD_TOOLSANDBOX_PYTHON=... python benchmarks/toolsandbox_sample.py [N]``
(default 200). Prints each category's share in the offline pool and in the sample, then
the scenario names on one line, ready for ToolSandbox's CLI (``tool_sandbox --agent ...
-s NAME ...``). Run every model and method on that list, then score the run directories
with ``agentguard pec RUN_DIR... --toolsandbox`` (docs/pec.md, "ToolSandbox").
"""

from __future__ import annotations

import sys
from collections import Counter

from agentguard.pec.toolsandbox_env import ToolSandboxWorker
from agentguard.pec.toolsandbox_sample import stratified_sample


def main(n: int) -> None:
    with ToolSandboxWorker() as worker:
        offline = {
            name: info.categories for name, info in worker.scenarios().items() if not info.network
        }
    sample = stratified_sample(offline, n)
    pool = Counter(c for cats in offline.values() for c in set(cats))
    got = Counter(c for name in sample for c in set(offline[name]))
    print(f"offline pool: {len(offline)} scenarios; sample: {len(sample)}", file=sys.stderr)
    for category, count in pool.most_common():
        print(
            f"  {category:28s} pool {count / len(offline):.3f}  sample {got[category] / len(sample):.3f}",
            file=sys.stderr,
        )
    print(" ".join(sample))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
