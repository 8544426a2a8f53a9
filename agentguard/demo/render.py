"""How the demo prints: one line per proposed call and its decision, then the reports."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentguard.demo.runner import DemoRun
from agentguard.enforcement.decision import Action, Decision

STYLE = {
    Action.ALLOW: ("ALLOW", "bold green"),
    Action.OVERRIDE: ("OVERRIDE", "bold yellow"),
    Action.BLOCK: ("BLOCK", "bold red"),
    Action.STOP: ("STOP", "bold white on red"),
}


def call_text(tool: str, args: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{tool}({inner})"


class Printer:
    """Prints decisions and results as they happen (used as the guard's listeners)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.count = 0
        self.refused = False

    def decision(self, decision: Decision) -> None:
        self.count += 1
        label, style = STYLE[decision.action]
        line = Text(f"{self.count:>3}  ")
        line.append(call_text(decision.tool, decision.args), style="cyan")
        line.append("  →  ")
        line.append(label, style=style)
        if decision.executes and self.refused:
            line.append("   ← the model changed course", style="italic yellow")
        self.refused = not decision.executes
        self.console.print(line)
        for violation in decision.violations:
            why = violation.message or violation.detail or "violated"
            self.console.print(
                Text(f"       {violation.constraint} [{violation.severity}]: {why}", style="red")
            )
            if violation.hint:
                self.console.print(Text(f"         to satisfy it: {violation.hint}", style="dim"))

    def result(self, tool: str, args: Mapping[str, Any], result: str) -> None:
        del args  # the decision line already showed them
        self.console.print(Text(f"       ran {tool} → {result}", style="dim"))


def compliance_table(compliance: Mapping[str, Any], title: str) -> Table:
    score = compliance.get("compliance_score", compliance.get("score"))
    label = compliance.get("compliance_label", compliance.get("label", ""))
    table = Table(title=f"{title}: score {_fmt(score)} ({label})", title_justify="left")
    for column in ("constraint", "layer", "weight", "passed", "detail"):
        table.add_column(column)
    for row in compliance.get("constraints", []):
        passed = row.get("passed")
        mark = Text("yes", style="green") if passed else Text("NO", style="bold red")
        table.add_row(
            str(row.get("name", "")),
            str(row.get("layer") or ""),
            _fmt(row.get("weight")),
            mark,
            str(row.get("detail", "")),
        )
    return table


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def print_files(console: Console, files: Mapping[str, Path]) -> None:
    """One line per file, never wrapped or cut, so paths stay copy-pasteable."""
    for what, path in files.items():
        console.print(Text(f"  {what:<13} ", style="bold") + Text(str(path)), soft_wrap=True)


def print_run_end(console: Console, run: DemoRun) -> None:
    if run.stopped is not None:
        console.print(Text(f"Run stopped: {run.stopped.message}", style="bold red"))
    else:
        console.print(Text("Final answer: ", style="bold") + Text(str(run.answer)))
    console.print()
    title = "Compliance (firewall report)" if run.guarded else "Compliance (verified afterwards)"
    console.print(compliance_table(run.compliance, title))
    print_files(console, run.files)


def summary(guarded: DemoRun, unguarded: DemoRun) -> Text:
    blocked = sum(not d.executes for d in guarded.attempts)
    text = Text("\n")
    text.append("With the guard: ", style="bold")
    text.append(
        f"{blocked} call(s) refused before they ran; the model corrected itself and "
        f"{len(guarded.refunded)} refund was issued after the identity check.\n"
    )
    text.append("Without it: ", style="bold")
    checked = any(c["tool_name"] == "verify_identity" for c in unguarded.calls_run)
    text.append(
        f"{len(unguarded.refunded)} refund issued, identity "
        f"{'checked' if checked else 'never checked'}, answer: {unguarded.answer!r}."
    )
    return text


def as_json(guarded: DemoRun, unguarded: DemoRun | None) -> str:
    def one(run: DemoRun) -> dict[str, Any]:
        return {
            "guarded": run.guarded,
            "answer": run.answer,
            "stopped": run.stopped.to_dict() if run.stopped else None,
            "attempts": [d.to_dict() for d in run.attempts],
            "calls_run": run.calls_run,
            "compliance": run.compliance,
            "files": {k: str(v) for k, v in run.files.items()},
        }

    runs = [one(guarded)] + ([one(unguarded)] if unguarded is not None else [])
    return json.dumps({"runs": runs}, indent=2, default=str)


__all__ = ["Printer", "as_json", "compliance_table", "print_run_end", "summary"]
