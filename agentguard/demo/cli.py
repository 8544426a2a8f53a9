"""``agentguard demo``: a guarded support agent, then the same run unguarded.

Needs the ``smolagents`` extra, no key and no network: the model is scripted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from agentguard.errors import MissingExtraError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``agentguard demo``."""
    parser = subparsers.add_parser(
        "demo",
        help="watch agentguard guard a (scripted) support agent issuing refunds",
        description=(
            "Run a smolagents support agent whose scripted model skips the identity check, "
            "repeats a refused call and answers before looking up; once with agentguard "
            "and once without. No API key or network needed."
        ),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the decision log, traces and reports (default: a new temp folder)",
    )
    parser.add_argument(
        "--no-contrast", action="store_true", help="skip the unguarded run shown for contrast"
    )
    parser.add_argument("--json", action="store_true", help="print plain JSON only")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out_dir: Path = args.out or Path(tempfile.mkdtemp(prefix="agentguard-demo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        from agentguard.demo import render, runner
        from agentguard.demo.scenario import TASK
    except MissingExtraError as exc:
        print(f"agentguard demo: {exc}", file=sys.stderr)
        return 2
    try:
        import smolagents  # noqa: F401 - only checking the extra is there
    except ImportError:
        print(f"agentguard demo: {MissingExtraError('smolagents', 'smolagents')}", file=sys.stderr)
        return 2

    if args.json:
        guarded = runner.run_guarded(out_dir)
        unguarded = None if args.no_contrast else runner.run_unguarded(out_dir)
        print(render.as_json(guarded, unguarded))
        return 0

    console = Console(file=sys.stdout, highlight=False)
    printer = render.Printer(console)
    console.print(Rule("agentguard demo: a support agent issuing refunds"))
    console.print(f"Task: {TASK}")
    console.print("Model: scripted (no key, no network). Spec: agentguard/demo/refund.ltl\n")
    console.print(Rule("1. With agentguard: every call is checked before it runs", style="green"))
    guarded = runner.run_guarded(out_dir, on_decision=printer.decision, on_result=printer.result)
    render.print_run_end(console, guarded)
    if not args.no_contrast:
        console.print()
        console.print(Rule("2. The same model without the guard", style="red"))
        unguarded = runner.run_unguarded(out_dir, on_result=printer.result)
        render.print_run_end(console, unguarded)
        console.print(render.summary(guarded, unguarded))
    console.print(f"\nEverything was written to {out_dir}", soft_wrap=True)
    return 0


__all__ = ["add_parser", "run"]
