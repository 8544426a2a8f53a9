"""What a smolagents ``ToolCallingAgent`` step costs with the guard, in instructions.

Timing on a shared machine cannot separate a few microseconds of a ~450 µs step;
instruction counts can. This runs ``overhead.py``'s scripted agent (one tool call per
model turn, then the answer) in one process under callgrind, each measured run inside
``sys.call_tracing`` (the collection is dumped before and after it, all threads
together), after a full collection with the collector's old objects frozen and the
collector off, so that no collection lands in one run and not another (hash seed fixed).

Two figures per configuration: instructions per further step (a 40-step run minus a
10-step run, divided by 30: the run's fixed costs, building the firewall, the final
answer, finishing, cancelled out) and the whole 40-step run divided by its 41 steps (as
``overhead.py`` divides its times). Configurations: the agent unguarded, the guard
around an allow-all firewall (the adapter and the session's own work), the real guard.

Each measured run loads the spec file afresh (``overhead.smolagents_case`` calls
``load_spec``), as ``guard(agent, "spec.ltl")`` or a service loading its policy per request
does: the whole-run figure includes finding the firewall's prototype by the spec's
content. ``overhead.py`` builds each case once and reuses its spec across repetitions.

    python benchmarks/smolagents_steps.py [--json]      # needs valgrind; a few minutes
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

from _callgrind import (  # this folder's (the script's folder is on sys.path)
    command,
    measured_runs,
    short_and_long,
)

SHORT, LONG = 10, 40
CONFIGURATIONS = ("unguarded", "adapter_only", "guarded")


def _prepare(config: str, steps: int) -> Callable[[], Any]:
    import overhead  # this folder's, on sys.path when run as a script

    plain, adapter_only, guarded, _ = overhead.smolagents_case(steps, 0.0)
    return {"unguarded": plain, "adapter_only": adapter_only, "guarded": guarded}[config]()


def inner(configs: list[str]) -> None:
    """The measured process: every configuration twice to warm up, then a short and a
    long run of each (``_callgrind.measured_runs``)."""
    from agentguard.errors import ToolMismatchWarning

    warnings.simplefilter("ignore", ToolMismatchWarning)  # the demo spec names more tools
    measured_runs(_prepare, configs, (SHORT, LONG), warmups=2, collector_off=True)


def measure(configs: list[str]) -> dict[str, dict[str, int]]:
    """Instructions per step of each configuration (callgrind, one process)."""
    short, long = short_and_long(__file__, configs, seed="0")
    return {
        c: {"further_step": (b - a) // (LONG - SHORT), "whole_run_per_step": b // (LONG + 1)}
        for c, a, b in zip(configs, short, long, strict=True)
    }


def main(argv: list[str] | None = None) -> int:
    found = command(__doc__, argv, inner, measure, CONFIGURATIONS)
    if found is None:
        return 0
    as_json, per_step = found
    if as_json:
        print(json.dumps(per_step, indent=2))
        return 0
    base = per_step["unguarded"]
    print("instructions per smolagents agent step (callgrind):")
    for config, row in per_step.items():
        further = row["further_step"] - base["further_step"]
        whole = row["whole_run_per_step"] - base["whole_run_per_step"]
        print(
            f"  {config:>12}: further step {row['further_step']:>10,} ({further:+,}); "
            f"whole run / {LONG + 1} {row['whole_run_per_step']:>10,} ({whole:+,})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
