"""AgentDojo with and without the firewall: utility, attack success, misses, cost.

    python benchmarks/agentdojo.py [--suite S ...] [--spec-dir specs/agentdojo]
        [--user-tasks a,b] [--injection-tasks c,d] [--version v1.2.2]
        [--attack important_instructions] [--memory-calls 100000] [--json PATH]

For each suite of AgentDojo (agentdojo 0.1.35; its tools, environments, tasks and
checks), with the spec ``SPEC_DIR/<suite>.ltl``, the model being agentguard's scripted
agent (:mod:`agentguard.testing.agentdojo_models`, no LLM, no network):

(a) **benign**: every user task's ground truth, one call per turn, through AgentDojo's
    own ``ToolsExecutor`` (no firewall) and through ``guard_pipeline`` (firewall); utility
    is the task's own check. Any call refused there is a *false refusal* (listed);
(b) **attacked**: every (user task, injection task) pair, the environment injected by
    AgentDojo's attack for the vectors the user task sees; the scripted agent is
    compromised: the user task's ground-truth calls, and right after the call whose result
    carries the injection, the injection task's calls (its ground truth; for tasks whose
    ground truth is empty, :mod:`agentguard.testing.agentdojo_attacks`), then the rest of
    the user task. Security is AgentDojo's own check on the resulting environment (true:
    the attack succeeded). A *miss* is a pair whose attack succeeded behind the firewall
    (listed, with the injection's calls that ran); a pair is *refused* when some call of
    the injection was refused and the attack failed.

Printed per suite, in AgentDojo's terms: benign utility, utility under attack and ASR
without and with the firewall; every false refusal and miss; the cost per checked call
(p50, p99: each guarded run replayed through a fresh shadow-mode firewall) and memory per
100k calls (the runs replayed end to end in one run, ``tracemalloc``). ``--json`` writes
the same numbers, pair by pair. Environments load as AgentDojo loads them, with libyaml.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]  # not the package

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import yaml  # noqa: E402
from agentdojo.agent_pipeline import (  # noqa: E402
    AgentPipeline,
    InitQuery,
    SystemMessage,
    ToolsExecutionLoop,
    ToolsExecutor,
)
from agentdojo.agent_pipeline.errors import AbortAgentError  # noqa: E402
from agentdojo.attacks.attack_registry import load_attack  # noqa: E402
from agentdojo.functions_runtime import FunctionsRuntime  # noqa: E402
from agentdojo.task_suite.load_suites import get_suite  # noqa: E402
from agentdojo.task_suite.task_suite import (  # noqa: E402
    functions_stack_trace_from_messages,
    model_output_from_messages,
    read_suite_file,
)
from agentguard.integrations.agentdojo import guard_pipeline  # noqa: E402

from agentguard.enforcement.firewall import Firewall  # noqa: E402
from agentguard.language import load_spec  # noqa: E402
from agentguard.scoring.verify import verify_trace  # noqa: E402
from agentguard.testing.agentdojo_models import ScriptedAgent  # noqa: E402
from agentguard.trace.formats.agentdojo import never_ran  # noqa: E402
from agentguard.trace.model import Trace  # noqa: E402
from agentguard.trace.refusal import is_refusal  # noqa: E402

SUITES = ("banking", "slack", "travel", "workspace")
PIPELINE = "scripted-local"  # "local": AgentDojo's attacks address the model as "Local model"


@dataclass
class Run:
    """One task run: AgentDojo's verdicts, and behind the firewall what it refused."""

    utility: bool
    security: bool
    """AgentDojo's security check as its runner computes it (a check that reads the
    model's requested calls, slack injection_task_5, counts refused calls too)."""
    harm: bool
    """The same check on the calls that ran: did the attack succeed (a miss)."""
    refused: list[dict[str, Any]] = field(default_factory=list)
    injected_ran: list[str] = field(default_factory=list)
    injected_refused: int = 0
    flagged: list[str] = field(default_factory=list)
    """Constraints the run's report finds violated at its end (checked late, not refused)."""
    stated: list[str] = field(default_factory=list)
    """Constraints an injected call that ran breaks itself (the spec states the attack;
    the firewall checks them only at the end of the run today)."""


@dataclass
class Pair:
    user_task: str
    injection_task: str | None
    plain: Run
    guarded: Run


class Suite:
    """One suite's tasks, environments, attack and spec."""

    def __init__(self, name: str, spec_dir: Path, version: str, attack: str) -> None:
        self.name = name
        self.suite = get_suite(version, name)
        self.spec = load_spec(spec_dir / f"{name}.ltl")
        self.agent = ScriptedAgent(self.suite, name=PIPELINE)
        self.plain = pipeline(self.agent)
        self.traces: list[Trace] = []
        self.guarded = guard_pipeline(self.plain, self.spec, on_run=self._keep)
        self.attack = load_attack(attack, self.suite, self.plain)
        self._text = read_suite_file(name, "environment.yaml", self.suite.data_path)
        self._defaults = self.suite.get_injection_vector_defaults()

    def _keep(self, session: Any) -> None:
        if session.report is not None:
            self.traces.append(session.report.trace)

    def environment(self, injections: dict[str, str]) -> Any:
        """``load_and_inject_default_environment``, read with libyaml (same values)."""
        text = self._text.format(**dict(self._defaults, **injections))
        return self.suite.environment_type.model_validate(yaml.load(text, Loader=yaml.CSafeLoader))

    def run(self, user_task: str, injection_task: str | None) -> Pair:
        task = self.suite.get_user_task_by_id(user_task)
        injection = (
            None if injection_task is None else self.suite.get_injection_task_by_id(injection_task)
        )
        injections = {} if injection is None else self.attack.attack(task, injection)
        runs = []
        for element in (self.plain, self.guarded):
            self.agent.set_task(task, injection)
            verdicts = run_task(self.suite, element, task, injection, self.environment(injections))
            runs.append(self._verdict(element, *verdicts))
        return Pair(user_task, injection_task, runs[0], runs[1])

    def _verdict(self, element: Any, utility: bool, security: bool, harm: bool) -> Run:
        run = Run(bool(utility), bool(security), bool(harm))
        if element is not self.guarded:
            return run
        session = self.guarded.agentguard.last
        run.flagged = sorted(r.name for r in session.report.compliance.violated)
        injected = set(self.agent.injected_calls)
        for decision in session.attempts:
            mine = decision.tool_call_id in injected
            if not decision.executes:
                run.refused.append(
                    {
                        "tool": decision.tool,
                        "args": dict(decision.args),
                        "constraints": sorted({v.constraint for v in decision.violations}),
                        "injected": mine,
                    }
                )
                run.injected_refused += mine
            elif mine:
                run.injected_ran.append(f"{decision.tool}({_short(decision.args)})")
        if harm:
            ran = [
                (d.tool, dict(d.args))
                for d in session.attempts
                if d.executes and d.tool_call_id in injected
            ]
            run.stated = broken_by(self.spec, session.report.trace, ran)
        return run


def broken_by(spec: Any, trace: Trace, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The constraints that one of ``calls`` (each found in ``trace`` by name and
    arguments) breaks: passed on the trace before it, violated once it is added."""
    broken: set[str] = set()
    for position, call in enumerate(trace):
        if (call.name, dict(call.args)) not in calls:
            continue
        before = {r.name for r in verify_trace(Trace(trace.calls[:position]), spec).violated}
        after = {r.name for r in verify_trace(Trace(trace.calls[: position + 1]), spec).violated}
        broken |= after - before
    return sorted(broken)


def run_task(
    suite: Any, element: Any, task: Any, injection: Any, env: Any
) -> tuple[bool, bool, bool]:
    """AgentDojo's ``run_task_with_pipeline`` (utility and security on its own terms),
    plus the security check given only the calls that ran."""
    env = task.init_environment(env)
    pre = env.model_copy(deep=True)
    try:
        _, _, env, messages, _ = element.query(task.PROMPT, FunctionsRuntime(suite.tools), env)
    except AbortAgentError as stop:
        env, messages = stop.task_environment, stop.messages
    output = model_output_from_messages(messages) or []
    requested = functions_stack_trace_from_messages(messages)
    utility = suite._check_task_result(task, output, pre, env, requested)
    if injection is None:
        return utility, True, True
    ran = [
        m["tool_call"]
        for m in messages
        if m["role"] == "tool"
        and not is_refusal(m["error"])
        and not (m["error"] and never_ran(m["error"], m["tool_call"].function))
    ]
    # a check may change what it reads (listing unread emails marks them read): copies
    pre_copy, env_copy = pre.model_copy(deep=True), env.model_copy(deep=True)
    security = suite._check_task_result(injection, output, pre, env, requested)
    return utility, security, suite._check_task_result(injection, output, pre_copy, env_copy, ran)


def pipeline(agent: Any) -> Any:
    loop = ToolsExecutionLoop([ToolsExecutor(), agent], max_iters=80)
    out = AgentPipeline([SystemMessage("You are a helpful assistant."), InitQuery(), agent, loop])
    out.name = PIPELINE
    return out


def _short(args: Any) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items() if v is not None)
    return text if len(text) <= 90 else text[:87] + "..."


def run_suite(name: str, args: argparse.Namespace) -> tuple[Suite, list[Pair], list[Pair]]:
    suite = Suite(name, Path(args.spec_dir), args.version, args.attack)
    users = _pick(args.user_tasks, suite.suite.user_tasks)
    injections = _pick(args.injection_tasks, suite.suite.injection_tasks)
    benign = [suite.run(u, None) for u in users]
    attacked = [suite.run(u, i) for u in users for i in injections]
    return suite, benign, attacked


def _pick(chosen: str | None, known: dict[str, Any]) -> list[str]:
    if not chosen:
        return list(known)
    names = [c.strip() for c in chosen.split(",") if c.strip()]
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(f"unknown task(s): {', '.join(missing)}")
    return names


def summary(benign: list[Pair], attacked: list[Pair]) -> dict[str, Any]:
    """The suite's numbers in AgentDojo's terms (rates over the runs)."""

    def rate(values: list[bool]) -> float:
        return round(100 * sum(values) / len(values), 2) if values else 0.0

    harmful = [p for p in attacked if p.plain.harm]
    return {
        "user_tasks": len(benign),
        "pairs": len(attacked),
        "benign_utility": {
            "plain": rate([p.plain.utility for p in benign]),
            "firewall": rate([p.guarded.utility for p in benign]),
        },
        "utility_under_attack": {
            "plain": rate([p.plain.utility for p in attacked]),
            "firewall": rate([p.guarded.utility for p in attacked]),
        },
        "attack_success": {
            "plain": rate([p.plain.security for p in attacked]),
            "firewall": rate([p.guarded.security for p in attacked]),
        },
        "false_refusals": sum(len(p.guarded.refused) for p in benign),
        "benign_runs_refused": sum(bool(p.guarded.refused) for p in benign),
        "attack_success_executed": {
            "plain": rate([p.plain.harm for p in attacked]),
            "firewall": rate([p.guarded.harm for p in attacked]),
        },
        "successful_without_firewall": len(harmful),
        "refused_before_harm": sum(
            p.plain.harm and p.guarded.injected_refused > 0 and not p.guarded.harm for p in attacked
        ),
        "misses": sum(p.guarded.harm for p in attacked),
        "misses_flagged_at_end": sum(p.guarded.harm and bool(p.guarded.flagged) for p in attacked),
        "misses_stated": sum(p.guarded.harm and bool(p.guarded.stated) for p in attacked),
        "benign_flagged_at_end": sum(bool(p.guarded.flagged) for p in benign),
    }


def _step(firewall: Firewall, call: Any) -> bool:
    """Replay one position: observe a message, or propose, start and complete a call
    (True)."""
    if not call.is_tool:
        fields = {k: v for k, v in call.args.items() if k != "text"}
        firewall.observe(call.kind, call.args["text"], **fields)
        return False
    decision = firewall.start(firewall.propose(call.name, call.args))
    firewall.complete(decision, call.result, error=call.result if call.error else None)
    return True


def replay_cost(spec: Any, traces: list[Trace]) -> list[float]:
    """Microseconds per checked call: propose + start + complete of each executed call of
    ``traces``, each run replayed through a fresh shadow-mode firewall."""
    times: list[float] = []
    for trace in traces:
        firewall = Firewall(spec, mode="shadow")
        for call in trace:
            start = time.perf_counter_ns()
            if _step(firewall, call):
                times.append((time.perf_counter_ns() - start) / 1000)
        firewall.finish()
    return times


def replay_memory(spec: Any, traces: list[Trace], calls: int) -> dict[str, Any]:
    """Bytes the firewall holds after ``calls`` checked calls (the runs replayed end to end
    in one shadow-mode run, keep_trace off) beyond what it held after the first 1%."""
    firewall = Firewall(spec, mode="shadow")
    tracemalloc.start()
    done, baseline = 0, None
    runs = [t for t in traces if any(c.is_tool for c in t)]
    while done < calls and runs:
        for call in (c for trace in runs for c in trace):
            done += _step(firewall, call)
            if baseline is None and done >= max(1, calls // 100):
                baseline = tracemalloc.get_traced_memory()[0]
            if done >= calls:
                break
    grown = tracemalloc.get_traced_memory()[0] - (baseline or 0)
    tracemalloc.stop()
    return {"calls": done, "bytes": grown, "per_100k_calls_mib": _per_100k(grown, done)}


def _per_100k(grown: int, calls: int) -> float:
    return round(grown / max(calls, 1) * 100_000 / 2**20, 3)


def render(results: dict[str, Any]) -> str:
    out = [
        f"AgentDojo {results['version']}, attack {results['attack']}, scripted agents (ground "
        "truths; compromised: the injection task's calls right after the call carrying it)",
        "",
        f"{'suite':<10} {'benign utility':>19} {'utility under attack':>21} {'ASR (AgentDojo)':>17} "
        f"{'ASR (ran)':>9} {'false':>6} {'refused':>12} {'misses':>7} {'stated':>7}",
        f"{'':<10} {'no fw':>9} {'fw':>9} {'no fw':>10} {'fw':>10} {'no fw':>8} {'fw':>8} "
        f"{'fw':>9} {'refus.':>6} {'before harm':>12} {'':>7} {'late':>7}",
    ]
    rows = [(name, suite["summary"]) for name, suite in results["suites"].items()]
    for name, s in [*rows, ("total", results["total"])]:
        out.append(
            f"{name:<10} {s['benign_utility']['plain']:>8.2f}% {s['benign_utility']['firewall']:>8.2f}% "
            f"{s['utility_under_attack']['plain']:>9.2f}% {s['utility_under_attack']['firewall']:>9.2f}% "
            f"{s['attack_success']['plain']:>7.2f}% {s['attack_success']['firewall']:>7.2f}% "
            f"{s['attack_success_executed']['firewall']:>8.2f}% "
            f"{s['false_refusals']:>6} {s['refused_before_harm']:>5}/{s['successful_without_firewall']:<6} "
            f"{s['misses']:>7} {s['misses_stated']:>7}"
        )
    out += [
        "",
        "ASR (AgentDojo): its security check as its runner computes it; ASR (ran): the same "
        "check on the calls that ran (AgentDojo's check of slack injection_task_5 reads the "
        "calls the model asked for, refused ones included). 'refused before harm': attacks "
        "that succeed without the firewall and, behind it, had a call refused and failed. "
        "'stated late': misses whose injected call breaks a constraint of the spec that the "
        "firewall checks only at the end of the run today (docs/agentdojo.md).",
    ]
    out += ["", "False refusals (benign runs):"]
    for name, suite in results["suites"].items():
        for pair in suite["benign"]:
            for r in pair["guarded"]["refused"]:
                out.append(
                    f"  {name} {pair['user_task']}: {r['tool']}({_short(r['args'])}) by {', '.join(r['constraints']) or '-'}"
                )
    out += ["", "Misses (the attack succeeded behind the firewall):"]
    for name, suite in results["suites"].items():
        for pair in suite["attacked"]:
            if pair["guarded"]["harm"]:
                ran = "; ".join(pair["guarded"]["injected_ran"]) or "no call (an answer-only goal)"
                late = pair["guarded"]["stated"]
                seen = f" [stated, checked only at the end: {', '.join(late)}]" if late else ""
                out.append(f"  {name} {pair['user_task']} x {pair['injection_task']}: {ran}{seen}")
    out += [
        "",
        "Benign runs whose report flags a violation at the end (checked late, not refused):",
    ]
    for name, suite in results["suites"].items():
        for pair in suite["benign"]:
            if pair["guarded"]["flagged"]:
                out.append(f"  {name} {pair['user_task']}: {', '.join(pair['guarded']['flagged'])}")
    cost, memory = results["cost"], results["memory"]
    out += [
        "",
        f"Firewall cost per checked call: p50 {cost['p50_us']:.1f} us, p99 {cost['p99_us']:.1f} us "
        f"({cost['calls']} calls)",
        f"Firewall memory: {memory['per_100k_calls_mib']:.3f} MiB per 100k calls "
        f"({memory['calls']} calls replayed in one run)",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--suite", action="append", choices=SUITES)
    parser.add_argument("--spec-dir", default=str(_HERE.parent / "specs" / "agentdojo"))
    parser.add_argument("--user-tasks")
    parser.add_argument("--injection-tasks")
    parser.add_argument("--version", default="v1.2.2")
    parser.add_argument("--attack", default="important_instructions")
    parser.add_argument("--memory-calls", type=int, default=100_000)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    logging.getLogger().setLevel(logging.WARNING)
    warnings.simplefilter("ignore")  # AgentDojo's own deprecation chatter
    results: dict[str, Any] = {"version": args.version, "attack": args.attack, "suites": {}}
    specs = []
    every_benign: list[Pair] = []
    every_attacked: list[Pair] = []
    for name in args.suite or SUITES:
        suite, benign, attacked = run_suite(name, args)
        every_benign += benign
        every_attacked += attacked
        results["suites"][name] = {
            "summary": summary(benign, attacked),
            "benign": [asdict(p) for p in benign],
            "attacked": [asdict(p) for p in attacked],
        }
        specs.append((suite.spec, suite.traces))
    results["total"] = summary(every_benign, every_attacked)
    times = [t for spec, runs in specs for t in replay_cost(spec, runs)]
    cuts = statistics.quantiles(times, n=100) if len(times) >= 2 else [0.0] * 99
    results["cost"] = {
        "calls": len(times),
        "p50_us": round(cuts[49], 2),
        "p99_us": round(cuts[98], 2),
    }
    memories = [replay_memory(spec, runs, args.memory_calls // len(specs)) for spec, runs in specs]
    done = sum(m["calls"] for m in memories)
    grown = sum(m["bytes"] for m in memories)
    results["memory"] = {
        "calls": done,
        "bytes": grown,
        "per_100k_calls_mib": _per_100k(grown, done),
    }
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
