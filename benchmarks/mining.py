"""How good is a mined spec? Mined per template from benchmark gold traces, judged on
held-aside instances against the benchmark's own layered specs.

For every template of the procedural benchmark (``agentguard.bench``): instances for
``--seeds`` seeds x ``--difficulties``; a seeded 80/20 split of the instances; a spec
mined (``agentguard.mining.mine``) from the gold traces of the 80%, each preceded by the
instance's prompt as a ``user_message`` event (``--no-dialogue``: tool calls only).
On the 20% held aside:

* false alarms: held-aside gold traces the mined spec scores below 1.0 (target <= 1%);
* mutations (``agentguard.bench.mutations``: wrong argument, skipped call, swapped
  calls): of those the instance's own layered spec detects (scores below 1.0), the share
  the mined spec detects too (target >= 90%).

Each mining configuration is measured in the same run: ``full`` (every template, data
flows, argument enumerations and ranges) and ``no-values`` (without enumerations and
ranges, which are what least privilege adds and held-out values can leave).

    python benchmarks/mining.py [--seeds 40] [--difficulties 1 2 3] [--no-dialogue]
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.bench.generate import generate_instance
from agentguard.bench.instance import Instance
from agentguard.bench.mutations import MUTATION_KINDS, mutations
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.language import parse_spec
from agentguard.mining import mine
from agentguard.scoring import verify_traces
from agentguard.trace.model import Call, Trace

CONFIGS: Mapping[str, Mapping[str, Any]] = {"full": {}, "no-values": {"values": False}}


def run_trace(inst: Instance, records: Sequence[Mapping[str, Any]], dialogue: bool) -> Trace:
    calls = [Call.message("user", inst.prompt)] if dialogue else []
    calls += [Call(r["tool_name"], dict(r["arguments"]), r.get("tool_result")) for r in records]
    return Trace(tuple(c.at(i) for i, c in enumerate(calls)))


def instances(template: str, seeds: int, difficulties: Sequence[int]) -> list[Instance]:
    out = []
    for d in difficulties:
        for s in range(seeds):
            try:
                out.append(generate_instance(template, d, s))
            except Exception:  # noqa: BLE001 - an instance over the call budget is skipped
                continue
    return out


def measure(
    template: str, seeds: int, difficulties: Sequence[int], dialogue: bool, split_seed: int
) -> dict[str, Counter[str]]:
    pool = instances(template, seeds, difficulties)
    random.Random(split_seed).shuffle(pool)
    cut = max(1, round(0.8 * len(pool)))
    train, held = pool[:cut], pool[cut:]
    gold = [run_trace(i, i.gold_records(), dialogue) for i in train]
    out: dict[str, Counter[str]] = {}
    mutated: list[tuple[str, Trace, bool]] = []
    for inst in held:
        layered = parse_spec(inst.spec_text)
        ms = list(mutations(inst))
        plain = [run_trace(inst, m.records, False) for m in ms]
        for m, report in zip(ms, verify_traces(plain, layered), strict=True):
            mutated.append((m.kind, run_trace(inst, m.records, dialogue), report.score < 1.0))
    held_gold = [run_trace(i, i.gold_records(), dialogue) for i in held]
    for name, options in CONFIGS.items():
        mined = mine(gold, **options)
        c: Counter[str] = Counter(constraints=len(mined.constraints), train=len(train))
        c["held"] = len(held)
        c["false_alarms"] = sum(r.score < 1.0 for r in verify_traces(held_gold, mined.spec))
        reports = verify_traces([t for _, t, _ in mutated], mined.spec)
        for (kind, _, layered_hit), report in zip(mutated, reports, strict=True):
            c[f"{kind}:total"] += 1
            c[f"{kind}:layered"] += layered_hit
            c[f"{kind}:both"] += layered_hit and report.score < 1.0
            c[f"{kind}:mined"] += report.score < 1.0
        out[name] = c
    return out


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}%" if b else "   - "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--difficulties", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--no-dialogue", dest="dialogue", action="store_false")
    parser.add_argument("--split-seed", type=int, default=0)
    args = parser.parse_args(argv)
    totals: dict[str, Counter[str]] = {name: Counter() for name in CONFIGS}
    print(
        f"{args.seeds} seeds x difficulties {args.difficulties}, 80/20 split, "
        f"dialogue {'on' if args.dialogue else 'off'}"
    )
    header = f"{'template':<26} {'config':<10} {'train':>5} {'held':>4} {'cons':>5} {'false alarms':>13} {'of layered-detected':>20}"
    print(header)
    for template in TEMPLATE_NAMES:
        for name, c in measure(
            template, args.seeds, args.difficulties, args.dialogue, args.split_seed
        ).items():
            totals[name].update(c)
            layered = sum(c[f"{k}:layered"] for k in MUTATION_KINDS)
            both = sum(c[f"{k}:both"] for k in MUTATION_KINDS)
            print(
                f"{template:<26} {name:<10} {c['train']:>5} {c['held']:>4} {c['constraints']:>5} "
                f"{c['false_alarms']:>4}/{c['held']:<3} {_pct(c['false_alarms'], c['held'])} "
                f"{both:>6}/{layered:<6} {_pct(both, layered)}"
            )
    print()
    for name, c in totals.items():
        layered = sum(c[f"{k}:layered"] for k in MUTATION_KINDS)
        both = sum(c[f"{k}:both"] for k in MUTATION_KINDS)
        print(
            f"{name}: false alarms {c['false_alarms']}/{c['held']} "
            f"({_pct(c['false_alarms'], c['held']).strip()}, target <= 1%); mutations the "
            f"layered specs detect, detected too: {both}/{layered} "
            f"({_pct(both, layered).strip()}, target >= 90%)"
        )
        for k in MUTATION_KINDS:
            print(
                f"  {k:<20} layered {c[f'{k}:layered']:>5}/{c[f'{k}:total']:<5} "
                f"mined {c[f'{k}:mined']:>5}/{c[f'{k}:total']:<5} "
                f"of layered-detected {_pct(c[f'{k}:both'], c[f'{k}:layered'])}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
