"""DECLARE discovery: ``agentguard.mining.discover`` vs pm4py's ``discover_declare``.

The same 1000 x 100 log over 12 activities (``benchmarks/declare.py``'s generator) is
written once as JSON Lines. Both discover the same 10 templates (existence, absence,
init, responded existence, response, precedence, chain and alternate response and
precedence: the ones both define alike) at the same thresholds, with pm4py's support
and confidence. Before timing, the two results must be equal, constraint by constraint,
support and confidence included (the script exits 1 otherwise).

Timed, medians of interleaved runs (loading from the file included in both):

* ``pm4py``: read the file (``json.loads``), build its event frame, ``discover_declare``;
* ``agentguard``: ``load_traces`` (its loader), the name sequences, ``discover``;
* the same, each as a whole fresh process (interpreter start and imports included):
  ``python -c ...``, since a CLI user pays those too.

    python benchmarks/mining_speed.py [--traces 1000] [--events 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from declare import make_log, median_interleaved  # the sibling benchmark's log

TEMPLATES = (
    "existence",
    "absence",
    "init",
    "responded_existence",
    "response",
    "precedence",
    "chainresponse",
    "chainprecedence",
    "altresponse",
    "altprecedence",
)
SUPPORT, CONFIDENCE = 0.1, 0.8

PM4PY = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
os.environ["PM4PY_SUPPRESS_WELCOME"] = "1"
import pandas as pd, pm4py
rows = []
with open(sys.argv[1]) as fh:
    for case, line in enumerate(fh):
        for j, call in enumerate(json.loads(line)["tool_calls"]):
            rows.append((str(case), call["tool_name"], j))
frame = pd.DataFrame(rows, columns=["case:concept:name", "concept:name", "t"])
frame["time:timestamp"] = pd.to_datetime(frame["t"], unit="s")
out = pm4py.discover_declare(frame, allowed_templates=set(sys.argv[2].split(",")),
    min_support_ratio=float(sys.argv[3]), min_confidence_ratio=float(sys.argv[4]))
print(sum(len(v) for v in out.values()))
"""

OURS = """
import sys
from agentguard.mining import discover
from agentguard.trace import load_traces
seqs = [r.trace.names for r in load_traces(sys.argv[1])]
out = discover(seqs, templates=sys.argv[2].split(","),
    min_support_ratio=float(sys.argv[3]), min_confidence_ratio=float(sys.argv[4]))
print(sum(len(v) for v in out.values()))
"""


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    return {
        t: {k: (int(v["support"]), int(v["confidence"])) for k, v in rules.items()}
        for t, rules in result.items()
        if rules
    }


def _process(code: str, path: Path, repeat: int) -> float:
    argv = [
        sys.executable,
        "-c",
        code,
        str(path),
        ",".join(TEMPLATES),
        str(SUPPORT),
        str(CONFIDENCE),
    ]
    env = {**os.environ, "PM4PY_SUPPRESS_WELCOME": "1"}
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.environ.setdefault("PM4PY_SUPPRESS_WELCOME", "1")
        import pandas as pd
        import pm4py

    from agentguard.mining import discover
    from agentguard.trace import load_traces

    log = make_log(args.traces, args.events)
    path = Path(tempfile.mkdtemp()) / "log.jsonl"
    path.write_text(
        "".join(json.dumps({"tool_calls": [{"tool_name": a} for a in t]}) + "\n" for t in log)
    )

    def theirs() -> Any:
        rows = []
        with path.open() as fh:
            for case, line in enumerate(fh):
                for j, call in enumerate(json.loads(line)["tool_calls"]):
                    rows.append((str(case), call["tool_name"], j))
        frame = pd.DataFrame(rows, columns=["case:concept:name", "concept:name", "t"])
        frame["time:timestamp"] = pd.to_datetime(frame["t"], unit="s")
        return pm4py.discover_declare(
            frame,
            allowed_templates=set(TEMPLATES),
            min_support_ratio=SUPPORT,
            min_confidence_ratio=CONFIDENCE,
        )

    def ours() -> Any:
        seqs = [r.trace.names for r in load_traces(path) if r.trace is not None]
        return discover(
            seqs, templates=TEMPLATES, min_support_ratio=SUPPORT, min_confidence_ratio=CONFIDENCE
        )

    a, b = _plain(ours()), _plain(theirs())
    same = a == b
    found = sum(len(v) for v in a.values())
    times = median_interleaved({"pm4py": theirs, "agentguard": ours}, args.repeat)
    proc = {
        "pm4py": _process(PM4PY, path, args.repeat),
        "agentguard": _process(OURS, path, args.repeat),
    }
    print(
        f"{args.traces} traces x {args.events} events, {len(TEMPLATES)} templates, "
        f"min support {SUPPORT}, min confidence {CONFIDENCE}; medians of {args.repeat}"
    )
    print(f"same constraints, support and confidence as pm4py: {same} ({found} constraints)")
    for name in ("pm4py", "agentguard"):
        print(f"  {name:<11} in process {times[name]:7.3f} s   whole process {proc[name]:7.3f} s")
    print(
        f"  speedup: {times['pm4py'] / times['agentguard']:.2f}x in process, "
        f"{proc['pm4py'] / proc['agentguard']:.2f}x whole process (target >= 2x)"
    )
    if not same:
        print(f"results differ:\nours   {a}\npm4py  {b}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
