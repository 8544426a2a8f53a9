"""Instruction counts of a benchmark's runs under callgrind (shared by the benchmarks
that count instructions: ``smolagents_steps.py``, ``langchain_hooks.py``).

The script re-runs itself under ``valgrind --tool=callgrind`` with ``--inner CONFIGS``;
there each measured run is called through ``sys.call_tracing``, and callgrind dumps
its counters before and after every such call, so each run's instructions are one
dump's total (all threads together). The hash seed is fixed: dict and set layouts, and
so instruction counts, move with it.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def run_totals(script: str, configs: list[str], *, seed: str) -> list[int]:
    """Instructions of each run the script's ``--inner`` pass made, in order."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--dump-before=sys_call_tracing",
            "--dump-after=sys_call_tracing",
            f"--callgrind-out-file={out}",
            sys.executable,
            script,
            "--inner",
            *configs,
        ]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(command, check=True, env=env, capture_output=True)
        dumps = sorted(Path(tmp).glob("cg.*"), key=lambda p: int(p.suffix[1:]))
        totals = [_total(p) for p in dumps]
    return totals[1::2]  # a dump before each run, then the run's own


def measured_runs(
    prepare: Callable[[str, int], Callable[[], Any]],
    configs: Sequence[str],
    sizes: tuple[int, int],
    *,
    warmups: int,
    collector_off: bool,
) -> None:
    """The ``--inner`` pass: each configuration run ``warmups`` times at 3 steps, then a
    short and a long run of each (``sizes``), each inside ``sys.call_tracing`` (where
    callgrind dumps), after a full collection with the old objects frozen (and, with
    ``collector_off``, the collector off for the run)."""
    for config in configs:
        for _ in range(warmups):
            prepare(config, 3)()
    for steps in sizes:
        for config in configs:
            run = prepare(config, steps)
            gc.collect()
            gc.freeze()
            if collector_off:
                gc.disable()
            sys.call_tracing(run, ())
            gc.enable()


def short_and_long(script: str, configs: list[str], *, seed: str) -> tuple[list[int], list[int]]:
    """Each configuration's instructions in its short run and in its long run (the
    ``--inner`` pass runs every configuration short, then every one long)."""
    runs = run_totals(script, configs, seed=seed)[-2 * len(configs) :]
    return runs[: len(configs)], runs[len(configs) :]


def command(
    doc: str | None,
    argv: list[str] | None,
    inner: Callable[[list[str]], None],
    measure: Callable[[list[str]], Any],
    configs: Sequence[str],
) -> tuple[bool, Any] | None:
    """The command line every such benchmark takes: ``--json``, and ``--inner CONFIGS``
    (its own pass under callgrind, run here: None). Otherwise ``(json wanted, what
    measure gave for every configuration)``, for the benchmark to print."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--inner", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    if args.inner:
        inner(args.inner)
        return None
    return bool(args.json), measure(list(configs))


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise ValueError(f"{dump}: no totals line")
