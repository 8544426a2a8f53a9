"""What a LangChain ``create_agent`` step costs with middleware, in instructions.

Timing on a shared machine cannot separate a few percent of a ~3 ms step; instruction
counts can. This runs ``overhead.py``'s scripted agent (one tool call per model turn) in
one process under callgrind, each measured invocation inside ``sys.call_tracing`` (the
collection is dumped before and after it, all threads together: the tools run in worker
threads), with the garbage collector's old objects frozen first so that no full-heap
collection lands in one run and not another. Instructions per step are the difference
between a 25-step and a 5-step run, divided by 20: what each further step costs, the
invocation's fixed costs (building the session, ``before_agent``, ``after_agent``)
cancelled out.

Configurations: the agent unguarded; middlewares doing nothing that each add one thing
the guard plugs into (its private state key, the ``before_agent``/``after_agent``
nodes, a ``wrap_model_call`` hook, a ``wrap_tool_call`` hook; each hook also as
``create_agent`` would chain it without the ``traceable`` wrapper, patched out for the
measurement only, to show the wrapper's share), and all of them at once
(``overhead.py``'s ``framework_hooks``); the guard around an allow-all firewall; the real
guard. ``create_agent`` wraps every ``wrap_*`` hook in LangSmith's ``traceable`` (tracing
on or not), runs the two agent hooks as graph nodes, and keeps each state key as a
channel that every step carries: that is the framework's charge, whoever plugs in.

    python benchmarks/langchain_hooks.py [--json]      # needs valgrind; a few minutes
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

SHORT, LONG = 5, 25
CONFIGURATIONS = (
    "unguarded",
    "state_keys",
    "agent_nodes",
    "wrap_model_call",
    "wrap_tool_call",
    "wrap_model_call_untraced",
    "wrap_tool_call_untraced",
    "framework_hooks",
    "adapter_only",
    "guarded",
)


def _hooks(what: str) -> Any:
    """A middleware adding only ``what`` of the guard's hooks and keys, doing nothing."""
    from agentguard.integrations.langchain import AgentGuardState, _presign_hooks
    from langchain.agents.middleware import AgentMiddleware

    def agent_hook(self: Any, state: Any, runtime: Any) -> None:  # noqa: ARG001
        return None

    def wrap(self: Any, request: Any, handler: Callable[[Any], Any]) -> Any:  # noqa: ARG001
        return handler(request)

    body: dict[str, dict[str, Any]] = {
        "state_keys": {"state_schema": AgentGuardState},
        "agent_nodes": {"before_agent": agent_hook, "after_agent": agent_hook},
        "wrap_model_call": {"wrap_model_call": wrap},
        "wrap_tool_call": {"wrap_tool_call": wrap},
    }
    cls = type(f"Only_{what}", (AgentMiddleware,), body[what.removesuffix("_untraced")])
    _presign_hooks(cls)  # as the guard's hooks are
    return cls()


def _prepare(config: str, steps: int) -> Callable[[], Any]:
    import overhead  # this folder's, on sys.path when run as a script

    plain, adapter_only, guarded, framework_hooks = overhead.langchain_case(steps, 0.0)
    if framework_hooks is None:
        raise ValueError("langchain_case has a framework-hooks preparer")
    whole = {"unguarded": plain, "adapter_only": adapter_only, "guarded": guarded}
    if config in whole or config == "framework_hooks":
        return whole.get(config, framework_hooks)()
    import langchain.agents.factory as factory

    saved, traceable = overhead.noop_middleware, factory.traceable
    overhead.noop_middleware = lambda: _hooks(config)  # the framework-hooks preparer, one part
    if config.endswith("_untraced"):  # the hook as create_agent chains it, minus ``traceable``
        factory.traceable = lambda **_kw: lambda hook: hook
    try:
        return framework_hooks()
    finally:
        overhead.noop_middleware, factory.traceable = saved, traceable


def inner(configs: list[str]) -> None:
    """The measured process: every configuration once to warm up, then a short and a
    long run of each (``_callgrind.measured_runs``)."""
    from agentguard.errors import ToolMismatchWarning

    warnings.simplefilter("ignore", ToolMismatchWarning)  # the demo spec names more tools
    measured_runs(_prepare, configs, (SHORT, LONG), warmups=1, collector_off=False)


def measure(configs: list[str]) -> dict[str, int]:
    """Instructions per step of each configuration (callgrind, one process)."""
    short, long = short_and_long(__file__, configs, seed="1")
    return {c: (b - a) // (LONG - SHORT) for c, a, b in zip(configs, short, long, strict=True)}


def main(argv: list[str] | None = None) -> int:
    found = command(__doc__, argv, inner, measure, CONFIGURATIONS)
    if found is None:
        return 0
    as_json, per_step = found
    base = per_step["unguarded"]
    added = {c: n - base for c, n in per_step.items()}
    row = {
        "unguarded": base,
        "added": {c: added[c] for c in CONFIGURATIONS[1:]},
        "adapter_own": per_step["adapter_only"] - per_step["framework_hooks"],
        "firewall_own": per_step["guarded"] - per_step["adapter_only"],
    }
    if as_json:
        print(json.dumps(row, indent=2))
        return 0
    print(f"instructions per agent step (callgrind), unguarded {base:,}; added:")
    for config in CONFIGURATIONS[1:]:
        print(f"  {config:>24}: {added[config]:>+10,} ({added[config] / base:+.1%})")
    print(
        f"  of the guard's: the framework's hooks {added['framework_hooks']:,}, "
        f"the adapter's own work {row['adapter_own']:,}, the firewall's {row['firewall_own']:,}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
