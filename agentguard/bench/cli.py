"""``agentguard bench``: generate instances and run agents on them.

``bench generate`` writes one ``<id>.json`` (Table 10's fields) and one ``<id>.ltl``
(the layered spec) per retained instance. ``bench run`` runs an agent (the scripted
one by default, or ``--agent module:factory``) under one setting and prints accuracy,
compliance, per-layer pass rates and enforcement events; ``--json`` prints JSON only.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from agentguard.bench.agent import AgentFactory, scripted_factory
from agentguard.bench.errors import BadParameterError, BenchError, InstanceTooLongError
from agentguard.bench.generate import (
    DIFFICULTIES,
    MAX_CALLS,
    PAPER_SEEDS,
    generate_instance,
    instance_to_json,
)
from agentguard.bench.instance import Instance
from agentguard.bench.runner import (
    SETTINGS,
    BenchSummary,
    RunResult,
    Setting,
    run_instance,
    summarize,
)
from agentguard.bench.simplified import (
    IDENTITY,
    SIMPLIFIED_TEMPLATES,
    SPLITS,
    generate_simplified,
    random_vocab,
    training_set,
    validation_split,
)
from agentguard.bench.synthesis import LAYER_NAMES
from agentguard.bench.templates import TEMPLATE_NAMES, get_template
from agentguard.errors import AgentGuardError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``bench generate`` and ``bench run``."""
    bench = subparsers.add_parser("bench", help="the procedural benchmark of AgentLTL Section 4")
    sub = bench.add_subparsers(dest="bench_command", required=True)

    gen = sub.add_parser("generate", help="write benchmark instances (JSON + .ltl spec)")
    gen.add_argument(
        "--template",
        nargs="+",
        default=["all"],
        help=f"template names or 'all' (choices: {', '.join(TEMPLATE_NAMES)})",
    )
    gen.add_argument(
        "--difficulty",
        nargs="+",
        type=int,
        default=list(DIFFICULTIES),
        choices=DIFFICULTIES,
        help="difficulty levels (default: 1-5)",
    )
    gen.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=list(PAPER_SEEDS),
        help="seeds (default: the paper's 42 123)",
    )
    gen.add_argument(
        "--max-calls",
        type=int,
        default=MAX_CALLS,
        help="drop instances whose gold trace is longer (default: 50)",
    )
    gen.add_argument(
        "--mode",
        choices=("production", "simplified", "simplified-train", "simplified-heldout"),
        default="production",
        help="production templates (default), simplified templates, the "
        "balanced 300-example simplified training set, or a held-out split (--split)",
    )
    gen.add_argument(
        "--split",
        choices=SPLITS,
        default="unseen-pattern",
        help="simplified-heldout: Table 2's validation split (default: unseen-pattern)",
    )
    gen.add_argument(
        "--size",
        type=int,
        default=None,
        help="simplified-heldout: instances in the split (default: Table 2's count)",
    )
    gen.add_argument(
        "--augmentation",
        nargs="+",
        default=["none"],
        choices=("none", "prefix", "suffix", "both"),
        help="simplified mode: augmentation variants (default: none)",
    )
    gen.add_argument(
        "--aliases",
        type=int,
        default=None,
        metavar="SEED",
        help="simplified mode: rename tools with aliases drawn with this seed",
    )
    gen.add_argument("--out", required=True, type=Path, help="output directory")
    gen.add_argument("--json", action="store_true", help="print a JSON summary only")
    gen.set_defaults(func=run_generate)

    run = sub.add_parser("run", help="run an agent on instances under one setting")
    run.add_argument(
        "instances", nargs="+", type=Path, help="instance .json files or directories holding them"
    )
    run.add_argument("--setting", choices=SETTINGS, default="baseline")
    run.add_argument(
        "--agent",
        default=None,
        help="'module:callable' returning an agent factory (default: scripted)",
    )
    run.add_argument(
        "--agent-seed",
        type=int,
        default=0,
        help="seed of the scripted agent's mistakes (default: 0)",
    )
    run.add_argument(
        "--trials",
        type=int,
        default=1,
        help="scripted-agent trials per instance, seeds agent-seed.. (default: 1)",
    )
    run.add_argument("--json", action="store_true", help="print JSON only")
    run.add_argument("--runs", action="store_true", help="with --json, include every run")
    run.set_defaults(func=run_run)


# -- generate --------------------------------------------------------------------------


def _given(instance: Instance) -> Instance:
    return instance


def _jobs(args: argparse.Namespace) -> list[Callable[[], Instance]]:
    """One thunk per instance to write, for the chosen mode."""
    if args.mode == "simplified-train":
        return [partial(_given, inst) for inst in training_set()]
    if args.mode == "simplified-heldout":
        return [partial(_given, inst) for inst in validation_split(args.split, args.size)]
    if args.mode == "simplified":
        names = tuple(SIMPLIFIED_TEMPLATES) if "all" in args.template else tuple(args.template)
        jobs: list[Callable[[], Instance]] = []
        for name in names:
            tpl = SIMPLIFIED_TEMPLATES.get(name)
            if tpl is None:
                raise BenchError(
                    f"unknown simplified template {name!r}; choose from "
                    f"{', '.join(SIMPLIFIED_TEMPLATES)}"
                )
            vocab = random_vocab(args.aliases, tpl.tools) if args.aliases is not None else IDENTITY
            for seed in args.seeds:
                for variant in ("a", "c") if tpl.transform else ("a",):
                    for aug in args.augmentation:
                        jobs.append(
                            partial(
                                generate_simplified,
                                name,
                                seed,
                                variant=variant,
                                augmentation=aug,
                                vocab=vocab,
                            )
                        )
        return jobs
    names = (
        TEMPLATE_NAMES
        if "all" in args.template
        else tuple(get_template(n).name for n in args.template)
    )
    return [
        partial(generate_instance, t, d, s, max_calls=args.max_calls)
        for t in names
        for d in args.difficulty
        for s in args.seeds
    ]


def run_generate(args: argparse.Namespace) -> int:
    try:
        jobs = _jobs(args)
    except AgentGuardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    dropped: list[str] = []
    console = Console(quiet=args.json)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("generating", total=len(jobs))
        for job in jobs:
            try:
                inst = job()
            except (InstanceTooLongError, BadParameterError) as exc:
                dropped.append(str(exc))
            else:
                (out / f"{inst.id}.json").write_text(
                    instance_to_json(inst) + "\n", encoding="utf-8"
                )
                (out / f"{inst.id}.ltl").write_text(inst.spec_text, encoding="utf-8")
                written.append(inst.id)
            progress.advance(task)
    if args.json:
        print(json.dumps({"out": str(out), "written": written, "dropped": dropped}))
    else:
        console.print(
            f"wrote {len(written)} instances to {out}"
            + (f" ({len(dropped)} dropped by the {args.max_calls}-call filter)" if dropped else "")
        )
    return 0


# -- run -----------------------------------------------------------------------------


def _instance_files(paths: Sequence[Path]) -> Iterator[Path]:
    for p in paths:
        if p.is_dir():
            yield from sorted(p.glob("*.json"))
        else:
            yield p


def _load_factory(spec: str | None, seed: int) -> AgentFactory:
    if spec is None:
        return scripted_factory(seed)
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise BenchError(f"--agent must look like 'module:callable', got {spec!r}")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise BenchError(f"cannot load agent {spec!r}: {exc}") from None
    return cast(AgentFactory, target())


def run_run(args: argparse.Namespace) -> int:
    console = Console(quiet=args.json)
    try:
        instances = [Instance.load(p) for p in _instance_files(args.instances)]
        factories = [
            _load_factory(args.agent, args.agent_seed + k)
            for k in range(max(args.trials, 1) if args.agent is None else 1)
        ]
    except AgentGuardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not instances:
        print("error: no instance files found", file=sys.stderr)
        return 2
    setting = cast(Setting, args.setting)
    results: list[RunResult] = []
    try:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task(f"{setting}", total=len(instances) * len(factories))
            for factory in factories:
                for inst in instances:
                    results.append(run_instance(inst, setting, factory))
                    progress.advance(task)
    except AgentGuardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = summarize(setting, results)
    if args.json:
        print(json.dumps(summary.to_dict(with_runs=args.runs)))
    else:
        _print_summary(console, summary)
    return 0


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _print_summary(console: Console, summary: BenchSummary) -> None:
    head = Table(title=f"agentguard bench · {summary.setting} · {summary.runs} runs")
    for col in ("Acc.", "C̄", *summary.layer_pass_rates, "Calls", "Stop"):
        head.add_column(col, justify="right")
    head.add_row(
        _pct(summary.accuracy),
        _pct(summary.compliance),
        *(_pct(v) for v in summary.layer_pass_rates.values()),
        f"{summary.mean_tool_calls:.1f}",
        str(summary.stopped),
    )
    console.print(head)
    if summary.setting == "baseline":
        return
    events = Table(title="Enforcement events per layer")
    for col in (
        "Layer",
        "Events",
        "Resolved",
        "Insisted",
        "Listened",
        "Insist rate (%)",
        "Insisted / resolved (%)",
    ):
        events.add_column(col, justify="right" if col != "Layer" else "left")
    for layer, e in summary.layer_events.items():
        rate: Any = e.insist_rate
        of_resolved: Any = e.insist_rate_resolved
        events.add_row(
            f"{layer} ({LAYER_NAMES[layer]})",
            str(e.events),
            str(e.resolved) if e.events else "—",
            str(e.insisted) if e.events else "—",
            str(e.listened) if e.events else "—",
            "—" if rate is None else f"{100 * rate:.2f}",
            "—" if of_resolved is None else f"{100 * of_resolved:.2f}",
        )
    console.print(events)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m agentguard.bench.cli``) until the lead wires it in."""
    parser = argparse.ArgumentParser(prog="agentguard")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
