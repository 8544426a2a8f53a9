"""What agentguard adds to an agent step: the same scripted agent with and without the guard.

For smolagents (ToolCallingAgent) and LangChain (create_agent), an agent makes ``--steps``
tool calls (one per model turn) and answers. Four configurations are run ``--repeat``
times each, interleaved (so that load drifts hit all alike): unguarded, the adapter
around an allow-all firewall (the adapter's own cost), the real guard, and the bare
Firewall making the calls the adapters make in that run (its share of the added time);
for LangChain also a middleware with the same hooks doing nothing, since ``create_agent``
itself charges for every ``wrap_*`` hook (it wraps each in LangSmith's ``traceable``,
tracing on or not): that part of the adapter's share is the framework's, whoever plugs in.
Reported per agent step, from the medians: the unguarded and guarded step, the time the
guard adds in microseconds and as a ratio of the unguarded step, the adapter's and the
firewall's part of it (and the hooks' own charge). Every timed run starts after a full
garbage collection, so no run pays for the garbage of the one before. Wall time is the headline; the process's CPU time is shown
beside it, steadier on a shared machine (the frameworks run tools in worker threads,
whose CPU time it includes).

The headline is the scripted model answering instantly: the guard against the
framework alone, with nothing to hide behind. Rows with a fixed model delay per turn
(``--model-latency-ms``, default 50; 0 skips them) follow, to show the same absolute
cost against a realistic step.

    python benchmarks/overhead.py [--steps 40] [--repeat 5] [--model-latency-ms 50]
        [--framework smolagents|langchain|all] [--spec specs/refund.ltl] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "refund.ltl"
"""The README's spec (``--spec`` for another, e.g. agentguard/demo/refund.ltl)."""


class AllowAll:
    """A firewall that allows everything at no cost: isolates the adapter's own overhead.

    (Its imports are done once, at construction: an import statement in ``propose``
    costs a few µs per call, which would be counted as the adapter's.)"""

    stopped = False

    def __init__(self) -> None:
        from agentguard.enforcement.decision import Action, Decision
        from agentguard.trace.model import Trace

        self.trace = Trace()
        self._allow, self._decision = Action.ALLOW, Decision

    def propose(self, name: str, args: Any, *, tool_call_id: Any = None) -> Any:
        return self._decision(self._allow, name, dict(args), tool_call_id=tool_call_id)

    def propose_batch(self, calls: Any) -> list[Any]:
        # the decisions built at once (not through ``propose``): the stand-in's own cost is
        # counted as the adapter's, so it is kept to the decision each call needs
        allow, decision = self._allow, self._decision
        return [
            decision(allow, c[0], dict(c[1]), tool_call_id=c[2] if len(c) > 2 else None)
            for c in calls
        ]

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


# each case: three preparers (unguarded, guard with an allow-all firewall, guard with the
# real firewall) and, where the framework charges for the hooks the adapter plugs into,
# a fourth: the same hooks doing nothing; a preparer builds a fresh agent untimed and
# returns the timed run.
Prepare = Callable[[], Callable[[], Any]]
Case = tuple[Prepare, Prepare, Prepare, Prepare | None]


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
        None,  # the guard's hooks are smolagents' own attributes: nothing charged for them
    )


def noop_middleware() -> Any:
    """A middleware with the guard's hooks and state key, each doing nothing: what
    ``create_agent`` charges for the hooks themselves (it wraps every ``wrap_*`` hook in
    LangSmith's ``traceable``, and runs ``before_agent``/``after_agent`` as graph nodes),
    whoever plugs into them. Its hooks are handed out with their signature precomputed,
    as the guard's are (``_presign_hooks``)."""
    from agentguard.integrations.langchain import AgentGuardState, _presign_hooks
    from langchain.agents.middleware import AgentMiddleware

    class NoOpHooks(AgentMiddleware[Any, Any, Any]):
        state_schema = AgentGuardState

        def before_agent(self, state: Any, runtime: Any) -> None:  # noqa: ARG002
            return None

        def after_agent(self, state: Any, runtime: Any) -> None:  # noqa: ARG002
            return None

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

    _presign_hooks(NoOpHooks)
    return NoOpHooks()


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
        middleware: list[Any] = []
        if kw.get("noop"):
            middleware = [noop_middleware()]
        elif not kw.get("plain"):
            middleware = [AgentGuardMiddleware(spec, **kw)]
        built = create_agent(model, [lookup_order], middleware=middleware)
        return lambda: built.invoke(task, config)

    return (
        lambda: prepare(plain=True),
        lambda: prepare(firewall_factory=AllowAll),
        lambda: prepare(),
        lambda: prepare(noop=True),
    )


# the firewall alone -------------------------------------------------------------------
def firewall_case(steps: int, *, assistant_turns: bool) -> Prepare:
    """The firewall's own share: a bare Firewall built and driven through the calls the
    adapters make in the run (the user's task observed, each turn's call proposed as a
    batch, started and completed, the answer likewise, the run finished); LangChain also
    observes each model turn (``assistant_turns``)."""
    from agentguard import load_spec
    from agentguard.enforcement.firewall import Firewall

    spec = load_spec(SPEC)

    def prepare() -> Callable[[], Any]:
        def run() -> None:
            firewall = Firewall(spec, keep_trace=True)  # as the guard's session builds it
            firewall.observe("user", "bench")
            for i in range(steps):
                if assistant_turns:
                    firewall.observe("assistant", "", tool_calls=1)
                args = {"order_id": f"A{i}"}
                (decision,) = firewall.propose_batch([("lookup_order", args, f"c{i}")])
                started = firewall.start(decision)
                firewall.complete(started, json.dumps({"order_id": f"A{i}", "amount": 10}))
            if assistant_turns:
                firewall.observe("assistant", "done", tool_calls=0)
            answer = {"answer": "done"}
            decision = firewall.start(firewall.propose("final_answer", answer))
            firewall.complete(decision, "done")
            firewall.finish()

        return run

    return prepare


CONFIGURATIONS = ("unguarded", "adapter_only", "guarded", "firewall_only", "framework_hooks")


def measure(name: str, case: Case, steps: int, repeat: int) -> dict[str, Any]:
    """Median wall and CPU time of each configuration, runs interleaved so that load
    drifts hit all alike; every configuration runs ``repeat`` times, each after a full
    garbage collection."""
    plain, adapter_only, guarded, hooks = case
    prepares: tuple[Prepare, ...] = (
        plain,
        adapter_only,
        guarded,
        firewall_case(steps, assistant_turns=name == "langchain"),
    )
    if hooks is not None:
        prepares = (*prepares, hooks)
    wall: list[list[float]] = [[] for _ in prepares]
    cpu: list[list[float]] = [[] for _ in prepares]
    for prepare in prepares:  # warm caches and imports
        prepare()()
    for _ in range(repeat):
        for i, prepare in enumerate(prepares):
            run = prepare()
            # the earlier runs' agents are garbage: collected now, not by a cyclic
            # collection that would land inside (and be charged to) this run
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            run()
            wall[i].append(time.perf_counter() - start)
            cpu[i].append(time.process_time() - start_cpu)
    turns = steps + 1
    row: dict[str, Any] = {"framework": name, "steps": turns, "repeat": repeat}
    for clock, times in (("wall", wall), ("cpu", cpu)):
        base, adapter, guarded, firewall, *floor = (statistics.median(t) for t in times)
        row[clock] = {
            "unguarded_us_per_step": round(base / turns * 1e6, 1),
            "guarded_us_per_step": round(guarded / turns * 1e6, 1),
            "added_us_per_step": round((guarded - base) / turns * 1e6, 1),
            "added_ratio": round(guarded / base - 1, 4),
            "adapter_us_per_step": round((adapter - base) / turns * 1e6, 1),
            "firewall_us_per_step": round(firewall / turns * 1e6, 1),
        }
        if floor:  # the framework's charge for the hooks, part of the adapter's share
            row[clock]["framework_hooks_us_per_step"] = round((floor[0] - base) / turns * 1e6, 1)
    return row


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
    parser.add_argument(
        "--framework",
        choices=("smolagents", "langchain", "all"),
        default="all",
        help="which framework to measure",
    )
    parser.add_argument("--spec", type=Path, default=None, help="the spec (default: the README's)")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    from agentguard.errors import ToolMismatchWarning

    global SPEC
    SPEC = args.spec or SPEC

    cases = {"smolagents": smolagents_case, "langchain": langchain_case}
    chosen = list(cases) if args.framework == "all" else [args.framework]

    def rows(latency_ms: float, steps: int, repeat: int) -> list[dict[str, Any]]:
        latency = latency_ms / 1000
        with warnings.catch_warnings():  # the demo spec names tools this agent lacks
            warnings.simplefilter("ignore", ToolMismatchWarning)
            return [measure(n, cases[n](steps, latency), steps, repeat) for n in chosen]

    headline = rows(0.0, args.steps, args.repeat)
    delayed: list[dict[str, Any]] = []
    if args.model_latency_ms > 0:  # a short run: the delay dominates its wall time
        delayed = rows(args.model_latency_ms, min(args.steps, 10), min(args.repeat, 3))
    result = {
        "spec": str(SPEC),
        "headline_no_model_delay": headline,
        "with_model_delay": {"model_latency_ms": args.model_latency_ms, "runs": delayed},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"spec {SPEC}; scripted model, no delay: {args.repeat} interleaved runs of each "
        "configuration, medians per agent step (wall; CPU of the process in brackets)"
    )
    for row in headline:
        _print(row)
    if delayed:
        print(f"\nwith a {args.model_latency_ms:g} ms model delay per turn (same guard cost):")
        for row in delayed:
            _print(row)
    return 0


def _print(row: dict[str, Any]) -> None:
    wall, cpu = row["wall"], row["cpu"]

    def both(key: str) -> str:
        return f"{wall[key]:.0f} [{cpu[key]:.0f}]"

    print(
        f"{row['framework']:>11}: {row['steps']} steps; per step: unguarded "
        f"{both('unguarded_us_per_step')} µs, guarded {both('guarded_us_per_step')} µs, "
        f"added {both('added_us_per_step')} µs (+{100 * wall['added_ratio']:.1f}% "
        f"[+{100 * cpu['added_ratio']:.1f}%]); of the added: the adapter around an "
        f"allow-all firewall {both('adapter_us_per_step')} µs, a bare firewall making "
        f"the run's calls {both('firewall_us_per_step')} µs"
        + (
            f"; the framework's charge for the same hooks doing nothing (in the adapter's "
            f"share) {both('framework_hooks_us_per_step')} µs"
            if "framework_hooks_us_per_step" in wall
            else ""
        )
    )


if __name__ == "__main__":
    sys.exit(main())
