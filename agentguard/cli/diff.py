"""``agentguard diff OLD.ltl NEW.ltl TRACES...``: what a policy change changes on real runs.

Wired into the main CLI by :func:`add_parser` (see ``_PLUGINS`` in ``cli/main.py``).
Every recorded run is replayed call by call through a shadow-mode firewall of each spec
(shadow mode decides every call as enforcement would, and lets the recorded run go on
as it happened), and scored offline under each spec. Listed: every call whose decision
changes (action or violated constraints), every constraint whose verdict changes, and
every score that changes. Exit codes: 0 nothing changes; 1 something changes; 2 a spec
is invalid or the command is misused; 3 some trace records could not be read (the
readable ones are still compared).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentguard.enforcement.decision import Decision
from agentguard.language.ast import Spec
from agentguard.terminal import json_text, printable
from agentguard.trace.model import Trace

EXIT_SAME, EXIT_CHANGED, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Verdicts:
    """One spec's view of one run: the decision on each call, and the offline score."""

    decisions: tuple[tuple[str, tuple[str, ...]], ...]  # (action, violated constraints)
    score: float
    label: str
    passed: dict[str, bool]


def _seen(d: Decision) -> tuple[str, tuple[str, ...]]:
    action = d.shadow if d.shadow is not None else d.action
    return action.value, tuple(sorted(v.constraint for v in d.violations))


def replay(trace: Trace, spec: Spec) -> Verdicts:
    """Replay ``trace`` through a shadow firewall of ``spec``; score it offline."""
    from agentguard.enforcement.firewall import Firewall
    from agentguard.scoring.verify import verify_trace

    fw = Firewall(spec, mode="shadow")
    decisions = []
    for call in trace:
        d = fw.propose(call.name, dict(call.args))
        decisions.append(_seen(d))
        if d.executes:
            fw.complete(d, call.result, error=str(call.result) if call.error else None)
        else:  # a protocol refusal (a repeated tool-call id): the run still had the call
            fw.record(call.name, dict(call.args), call.result)
    fw.finish()
    report = verify_trace(trace, spec)
    passed = {c.name: c.passed for c in report.constraints}
    return Verdicts(tuple(decisions), report.score, report.label, passed)


def compare(trace: Trace, old: Spec, new: Spec) -> dict[str, Any]:
    """Every change between ``old`` and ``new`` on one run (empty lists when none)."""
    a, b = replay(trace, old), replay(trace, new)
    calls = []
    for i, (call, x, y) in enumerate(zip(trace, a.decisions, b.decisions, strict=True)):
        if x != y:
            calls.append(
                {
                    "position": i,
                    "tool": call.name,
                    "old": {"action": x[0], "violations": list(x[1])},
                    "new": {"action": y[0], "violations": list(y[1])},
                }
            )
    constraints = []
    for name in sorted(set(a.passed) | set(b.passed)):
        before, after = a.passed.get(name), b.passed.get(name)
        if before != after:
            constraints.append(
                {"constraint": name, "old": _verdict(before), "new": _verdict(after)}
            )
    score = None
    if abs(a.score - b.score) > 1e-12 or a.label != b.label:
        score = {"old": a.score, "new": b.score, "old_label": a.label, "new_label": b.label}
    return {"calls": calls, "constraints": constraints, "score": score}


def _verdict(passed: bool | None) -> str:
    return "absent" if passed is None else ("passed" if passed else "violated")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``diff`` on the main parser's sub-commands."""
    from agentguard.trace.formats import format_names

    parser = subparsers.add_parser(
        "diff",
        help="replay recorded runs under two specs and list every decision and score that changes",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("old", help="the current .ltl spec")
    parser.add_argument("new", help="the proposed .ltl spec")
    parser.add_argument("traces", nargs="+", help="recorded runs (any format check reads)")
    parser.add_argument("--format", choices=format_names(), default=None)
    parser.add_argument("--no-final-answer", dest="final_answer", action="store_false")
    parser.add_argument("--json", action="store_true", help="print the changes as JSON")
    from agentguard.cli.check import add_load_option  # imported with the command

    add_load_option(parser)
    parser.set_defaults(func=run)


def _render(runs: Sequence[dict[str, Any]]) -> list[str]:
    lines = []
    for run in runs:
        if run.get("error"):
            lines.append(f"{run['run']}: unreadable: {run['error']}")
            continue
        if not (run["calls"] or run["constraints"] or run["score"]):
            continue
        lines.append(f"{run['run']}:")
        for c in run["calls"]:
            old, new = c["old"], c["new"]
            lines.append(
                f"  call {c['position']} {c['tool']}: {old['action']} {old['violations']} -> "
                f"{new['action']} {new['violations']}"
            )
        for c in run["constraints"]:
            lines.append(f"  constraint {c['constraint']}: {c['old']} -> {c['new']}")
        if run["score"]:
            s = run["score"]
            lines.append(
                f"  score {s['old']:.3f} ({s['old_label']}) -> {s['new']:.3f} ({s['new_label']})"
            )
    return lines


def run(args: argparse.Namespace) -> int:
    from agentguard.cli import main as cli
    from agentguard.report import batch
    from agentguard.trace.loaders import LoadedTrace

    old = cli._load(args.old, args.load)
    new = cli._load(args.new, ()) if old is not None else None
    if old is None or new is None:
        return EXIT_USAGE
    runs: list[dict[str, Any]] = []
    unreadable = False
    for item in batch.read_files(args.traces, format=args.format, final_answer=args.final_answer):
        if not isinstance(item, LoadedTrace) or item.trace is None:
            unreadable = True
            label = f"{item.source}" + (f"#{item.record}" if item.record is not None else "")
            runs.append({"run": label, "error": str(item.error)})
            continue
        label = f"{item.source}#{item.record}" + (f" ({item.task_id})" if item.task_id else "")
        runs.append({"run": label, **compare(item.trace, old, new)})
    changed = [r for r in runs if r.get("calls") or r.get("constraints") or r.get("score")]
    if args.json:
        doc = {"old": args.old, "new": args.new, "changed": len(changed), "runs": runs}
        print(json_text(json.loads(json.dumps(doc, default=str))))
    else:
        lines = _render(runs)
        lines.append(f"{len(changed)} of {len(runs)} run(s) change")
        print(printable("\n".join(lines), one_line=False))
    if unreadable:
        return EXIT_INPUT
    return EXIT_CHANGED if changed else EXIT_SAME
