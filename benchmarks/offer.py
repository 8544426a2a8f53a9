"""What telling the model what may run now saves: refusals and model turns per run.

The procedural benchmark's instances (``agentguard bench``: every template, difficulties
1..5, ``--seeds``), each run through a firewall (every constraint SOFT_BLOCK(3), as the
bench's ``soft-block`` setting) by an *error-prone* scripted agent: at each turn, with a
seeded probability ``p``, it picks a uniformly random tool from the tools it is offered
instead of the gold next call (with the gold call's arguments when the tool matches,
else the arguments of that tool's first gold call, else none; ``final_answer`` answers
early); otherwise it makes the gold next call, if its tool is offered (a model calls only
the tools it is offered: else it picks among them as above). Without the option it is offered every
tool; with ``offer="narrow"`` it is offered only the tools
``Firewall.permissions`` does not list as refused (the final answer always), so it picks
only among those. The same agent seed in both settings.

Per setting and ``p``: refusals per run (decisions that refused a call), model turns per
run (proposals), accuracy (the right answer), compliance (the offline score of the
executed trace), and the cost of the answer: the time of ``permissions`` + narrowing per
turn against the time of the step itself (``propose`` + ``record``) in the same run.

    python benchmarks/offer.py [--seeds 0 1 2 3 4] [--p 0.1 0.3]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentguard.bench.errors import BadParameterError
from agentguard.bench.generate import generate_suite, instance_spec_text
from agentguard.bench.instance import Instance
from agentguard.bench.reward import parse_answer
from agentguard.bench.runner import call_budget
from agentguard.bench.tools import Toolbox
from agentguard.enforcement.agent_tools import spec_tool_names
from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.offering import offering
from agentguard.language import parse_spec
from agentguard.scoring import verify_trace
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import DIALOGUE_NAMES, Trace


class ErrorProneAgent:
    """The gold trace, with a random offered tool instead of the next call at rate ``p``."""

    def __init__(self, instance: Instance, p: float, seed: int) -> None:
        digest = hashlib.sha256(f"{instance.id}/{seed}/{p}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.p = p
        self.gold = [(c.name, dict(c.args)) for c in instance.gold_trace]
        self.first_args: dict[str, dict[str, Any]] = {}
        for name, args in self.gold:
            self.first_args.setdefault(name, args)
        self.expected = instance.expected_answer
        self.done = 0  # gold calls executed, in order

    def act(self, offered: Sequence[str]) -> tuple[str, dict[str, Any]]:
        gold = self.gold[self.done] if self.done < len(self.gold) else None
        if self.rng.random() < self.p:
            return self._random(offered, gold)
        if gold is None:
            return FINAL_TOOL, {"answer": self._answer()}
        if gold[0] not in offered:  # a model calls only the tools it is offered
            return self._random(offered, None)
        return gold[0], dict(gold[1])

    def _random(
        self, offered: Sequence[str], gold: tuple[str, dict[str, Any]] | None
    ) -> tuple[str, dict[str, Any]]:
        name = self.rng.choice(list(offered))
        if name == FINAL_TOOL:
            return FINAL_TOOL, {"answer": self._answer()}
        if gold is not None and name == gold[0]:
            return name, dict(gold[1])
        return name, dict(self.first_args.get(name, {}))

    def ran(self, name: str, args: dict[str, Any]) -> None:
        if self.done < len(self.gold) and (name, args) == self.gold[self.done]:
            self.done += 1

    def _answer(self) -> str:
        value = self.expected if self.done == len(self.gold) else self.expected + 1
        return f"ANSWER: {value}"


@dataclass
class Totals:
    runs: int = 0
    refusals: int = 0
    turns: int = 0
    correct: int = 0
    compliance: float = 0.0
    answer_ns: int = 0  # permissions + narrowing
    step_ns: int = 0  # propose + record

    def row(self, label: str) -> str:
        n = max(self.runs, 1)
        ratio = self.answer_ns / self.step_ns if self.step_ns else 0.0
        return (
            f"{label:<22} refusals/run {self.refusals / n:6.2f}  turns/run {self.turns / n:6.2f}"
            f"  accuracy {self.correct / n:5.3f}  compliance {self.compliance / n:5.3f}"
            f"  answer/step {ratio:5.2f}x"
        )


def run(instance: Instance, p: float, seed: int, narrow: bool, totals: Totals) -> None:
    spec_text = instance_spec_text(instance, severity="SOFT_BLOCK(3)")
    fw = Firewall(parse_spec(spec_text), soft_block_limit=3, keep_trace=True)
    toolbox = Toolbox(instance.seed, instance.difficulty, instance.tools, aliases=instance.aliases)
    names = [*toolbox.names, FINAL_TOOL]
    agent = ErrorProneAgent(instance, p, seed)
    budget = call_budget(instance.difficulty)
    answer: Any = None
    executed = 0
    for _ in range(4 * budget + 8):
        offered: Sequence[str] = names
        if narrow:
            t0 = time.perf_counter_ns()
            offered = offering(fw, names, "narrow").tools
            totals.answer_ns += time.perf_counter_ns() - t0
        name, args = agent.act(offered)
        totals.turns += 1
        if name != FINAL_TOOL and executed >= budget:
            break
        t0 = time.perf_counter_ns()
        decision = fw.propose(name, args)
        totals.step_ns += time.perf_counter_ns() - t0
        if not decision.executes:
            totals.refusals += 1
            if decision.action is Action.STOP:
                break
            continue
        if name == FINAL_TOOL:
            t0 = time.perf_counter_ns()
            fw.record(name, args, args["answer"])
            totals.step_ns += time.perf_counter_ns() - t0
            answer = args["answer"]
            break
        try:  # the tool's own time is not the firewall's step
            result: Any = toolbox.call(name, args)
        except BadParameterError as exc:
            result = {"error": str(exc)}
        t0 = time.perf_counter_ns()
        fw.record(name, args, result)
        totals.step_ns += time.perf_counter_ns() - t0
        executed += 1
        agent.ran(name, args)
    report = fw.finish()
    trace = Trace(tuple(c for c in report.trace if c.name != FINAL_TOOL))
    totals.runs += 1
    totals.correct += parse_answer(answer) == instance.expected_answer
    totals.compliance += float(verify_trace(trace, parse_spec(instance.spec_text)).score)


SAMPLE: dict[str, Any] = {
    "str": "x",
    "number": 1,
    "int": 1,
    "bool": True,
    "list": [],
    "dict": {},
    "any": "x",
}


def shipped(path: Path, steps: int, seed: int) -> tuple[float, float]:
    """Mean ns of ``permissions`` (all the spec's tools) and of a step, on ``steps``
    seeded random calls to the spec's tools (arguments of the declared types), the
    allowed ones run (an empty result); the run restarts when it stops."""
    spec = parse_spec(path.read_text(), source=str(path))
    decls = {d.name: d for d in spec.tools}
    names = [n for n in {*spec_tool_names(spec), FINAL_TOOL} if n not in DIALOGUE_NAMES]
    names.sort()
    rng = random.Random(seed)
    fw = Firewall(spec)
    answer_ns = step_ns = 0
    for _ in range(steps):
        if fw.stopped:
            fw.finish()
            fw = Firewall(spec)
        t0 = time.perf_counter_ns()
        fw.permissions(names)
        answer_ns += time.perf_counter_ns() - t0
        name = rng.choice(names)
        decl = decls.get(name)
        args = {p.name: SAMPLE.get(p.type, "x") for p in decl.params} if decl else {}
        t0 = time.perf_counter_ns()
        d = fw.propose(name, args)
        if d.executes:
            fw.record(name, args, {})
        step_ns += time.perf_counter_ns() - t0
    fw.finish()
    return answer_ns / steps, step_ns / steps


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--p", type=float, nargs="+", default=[0.1, 0.3])
    parser.add_argument("--agent-seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300, help="calls per shipped spec")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent / "specs"
    print("shipped specs: permissions() per turn against the step (propose + record), warm")
    for path in sorted(root.rglob("*.ltl")):
        shipped(path, args.steps, 0)  # warm: the spec compiled, its machines' memos filled
        answer, step = shipped(path, args.steps, 1)
        rel = path.relative_to(root)
        print(
            f"  {rel!s:<28} answer {answer / 1e3:8.1f} us  step {step / 1e3:8.1f} us"
            f"  ratio {answer / step:5.2f}x"
        )
    instances = list(generate_suite(seeds=args.seeds))
    print(f"{len(instances)} instances x {args.agent_seeds} agent seeds")
    for p in args.p:
        without, with_ = Totals(), Totals()
        for instance in instances:
            for seed in range(args.agent_seeds):
                run(instance, p, seed, False, without)
                run(instance, p, seed, True, with_)
        print(f"p = {p}")
        print(without.row("  all tools offered"))
        print(with_.row("  offer='narrow'"))
        drop = 1 - with_.refusals / without.refusals if without.refusals else 0.0
        turns = 1 - with_.turns / without.turns if without.turns else 0.0
        print(f"  refusals down {drop:.0%}, model turns down {turns:.0%}")


if __name__ == "__main__":
    main()
