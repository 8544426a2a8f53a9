"""What agentguard adds to an agent step: the same scripted agent with and without the guard.

For smolagents (ToolCallingAgent) and LangChain (create_agent), an agent makes ``--steps``
tool calls (one per model turn) and answers; the three configurations (unguarded, the
adapter around an allow-all firewall, the real guard) are run ``--repeat`` times each,
interleaved, and the median wall time is kept. Reported: the time the guard adds per
step, in microseconds and as a ratio of the unguarded step.

The headline is the scripted model answering instantly: the guard against the
framework alone, with nothing to hide behind. Rows with a fixed model delay per turn
(``--model-latency-ms``, default 50; 0 skips them) follow, to show the same absolute
cost against a realistic step.

    python benchmarks/overhead.py [--steps 40] [--repeat 5] [--model-latency-ms 50] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SPEC = Path(__file__).resolve().parents[1] / "agentguard" / "demo" / "refund.ltl"


class AllowAll:
    """A firewall that allows everything at no cost: isolates the adapter's own overhead."""

    stopped = False

    def __init__(self) -> None:
        from agentguard.trace.model import Trace

        self.trace = Trace()

    def propose(self, name: str, args: Any, *, tool_call_id: Any = None) -> Any:
        from agentguard.enforcement.decision import Action, Decision

        return Decision(Action.ALLOW, name, dict(args), tool_call_id=tool_call_id)

    def propose_batch(self, calls: Any) -> list[Any]:
        return [self.propose(c[0], c[1], tool_call_id=c[2] if len(c) > 2 else None) for c in calls]

    def start(self, decision: Any) -> Any:
        return decision

    def complete(self, decision: Any, result: Any = None, *, error: Any = None) -> list[Any]:  # noqa: ARG002
        return []

    def is_in_flight(self, decision: Any) -> bool:  # noqa: ARG002
        return False

    def withdraw(self, decision: Any, reason: str) -> None:  # noqa: ARG002
        return None

    def record(self, name: str, args: Any, result: Any) -> list[Any]:  # noqa: ARG002
        return []

    def finish(self) -> Any:
        return None


def _median_seconds(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# each case: three preparers (unguarded, guard with an allow-all firewall, guard with the
# real firewall); a preparer builds a fresh agent untimed and returns the timed run.
Prepare = Callable[[], Callable[[], Any]]
Case = tuple[Prepare, Prepare, Prepare]


def smolagents_case(steps: int, latency: float) -> Case:
    from smolagents import ToolCallingAgent, tool

    from agentguard import load_spec
    from agentguard.guard import guard
    from agentguard.testing.smolagents_models import ScriptedModel, call

    spec = load_spec(SPEC)

    def lookup(order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: The order number.
        """
        return json.dumps({"order_id": order_id, "amount": 10})

    lookup.__name__ = "lookup_order"
    lookup_order = tool(lookup)

    class SlowModel(ScriptedModel):
        def generate(self, *args: Any, **kwargs: Any) -> Any:
            if latency:
                time.sleep(latency)
            return super().generate(*args, **kwargs)

    def agent() -> Any:
        turns: list[Any] = [call("lookup_order", order_id=f"A{i}") for i in range(steps)]
        model = SlowModel([*turns, call("final_answer", answer="done")])
        return ToolCallingAgent(
            tools=[lookup_order], model=model, verbosity_level=-1, max_steps=steps + 2
        )

    def prepare(**kw: Any) -> Callable[[], Any]:
        built = agent() if kw.get("plain") else guard(agent(), spec, **kw)
        return lambda: built.run("bench")

    return (
        lambda: prepare(plain=True),
        lambda: prepare(firewall_factory=AllowAll),
        lambda: prepare(),
    )


def langchain_case(steps: int, latency: float) -> Case:
    from agentguard.integrations.langchain import AgentGuardMiddleware
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from agentguard import load_spec
    from agentguard.testing.langchain_models import ScriptedChatModel, call

    spec = load_spec(SPEC)

    @tool
    def lookup_order(order_id: str) -> str:
        """Look an order up."""
        return json.dumps({"order_id": order_id, "amount": 10})

    class SlowChatModel(ScriptedChatModel):
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            if latency:
                time.sleep(latency)
            return super()._generate(*args, **kwargs)

    config: Any = {"recursion_limit": 4 * steps + 20}
    task: Any = {"messages": [("user", "bench")]}

    def prepare(**kw: Any) -> Callable[[], Any]:
        turns: list[Any] = [call("lookup_order", order_id=f"A{i}") for i in range(steps)]
        model = SlowChatModel([*turns, "done"])
        middleware = [] if kw.get("plain") else [AgentGuardMiddleware(spec, **kw)]
        built = create_agent(model, [lookup_order], middleware=middleware)
        return lambda: built.invoke(task, config)

    return (
        lambda: prepare(plain=True),
        lambda: prepare(firewall_factory=AllowAll),
        lambda: prepare(),
    )


# the firewall alone -------------------------------------------------------------------
def firewall_per_call(calls: int, repeat: int) -> float:
    """Seconds per propose+record pair on the bare firewall (no framework around it)."""
    from agentguard import load_spec
    from agentguard.enforcement.firewall import Firewall

    spec = load_spec(SPEC)

    def run() -> None:
        firewall = Firewall(spec)
        for i in range(calls):
            args = {"order_id": f"A{i}"}
            firewall.propose("lookup_order", args)
            firewall.record("lookup_order", args, {"order_id": f"A{i}", "amount": 10})
        firewall.finish()

    return _median_seconds(run, repeat) / calls


def measure(name: str, case: Case, steps: int, repeat: int) -> dict[str, Any]:
    """Median wall time of each configuration, runs interleaved so load drifts hit all three."""
    times: list[list[float]] = [[], [], []]
    for prepare in case:  # warm caches and imports
        prepare()()
    for _ in range(repeat):
        for i, prepare in enumerate(case):
            run = prepare()
            start = time.perf_counter()
            run()
            times[i].append(time.perf_counter() - start)
    base, adapter, with_guard = (statistics.median(t) for t in times)
    turns = steps + 1
    return {
        "framework": name,
        "steps": turns,
        "unguarded_s": round(base, 4),
        "adapter_only_s": round(adapter, 4),
        "guarded_s": round(with_guard, 4),
        "added_ratio": round(with_guard / base - 1, 4),
        "added_us_per_step": round((with_guard - base) / turns * 1e6, 1),
        "adapter_us_per_step": round((adapter - base) / turns * 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--steps", type=int, default=40, help="tool calls per run")
    parser.add_argument("--repeat", type=int, default=5, help="runs per configuration")
    parser.add_argument(
        "--model-latency-ms",
        type=float,
        default=50.0,
        help="fixed model delay per turn for the rows after the headline (0: no such rows)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)

    def rows(latency_ms: float, steps: int, repeat: int) -> list[dict[str, Any]]:
        latency = latency_ms / 1000
        return [
            measure("smolagents", smolagents_case(steps, latency), steps, repeat),
            measure("langchain", langchain_case(steps, latency), steps, repeat),
        ]

    headline = rows(0.0, args.steps, args.repeat)
    delayed: list[dict[str, Any]] = []
    if args.model_latency_ms > 0:  # a short run: the delay dominates its wall time
        delayed = rows(args.model_latency_ms, min(args.steps, 10), min(args.repeat, 3))
    bare = firewall_per_call(args.steps, args.repeat)
    result = {
        "headline_no_model_delay": headline,
        "with_model_delay": {"model_latency_ms": args.model_latency_ms, "runs": delayed},
        "firewall_us_per_call": round(bare * 1e6, 1),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"scripted model, no delay: {args.repeat} interleaved runs each, median")
    for row in headline:
        _print(row)
    print(f"   firewall: {result['firewall_us_per_call']:.0f} µs per propose+record (bare)")
    if delayed:
        print(f"\nwith a {args.model_latency_ms:g} ms model delay per turn (same guard cost):")
        for row in delayed:
            _print(row)
    return 0


def _print(row: dict[str, Any]) -> None:
    print(
        f"{row['framework']:>11}: {row['steps']} steps, unguarded {row['unguarded_s']:.4f}s, "
        f"guarded {row['guarded_s']:.4f}s, +{100 * row['added_ratio']:.1f}% "
        f"({row['added_us_per_step']:.0f} µs per step, of which the adapter "
        f"{row['adapter_us_per_step']:.0f} µs)"
    )


if __name__ == "__main__":
    sys.exit(main())
