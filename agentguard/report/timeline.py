"""Per-call verdicts of every constraint: the data behind a report's trace timeline.

The online :class:`~agentguard.monitor.Monitor` is stepped over the trace, one call at
a time, so each position shows what the firewall would have known then: a constraint
already satisfied or violated for good, or still pending (and, if pending, whether the
run would satisfy it by ending there). Before a call that violates a constraint the
monitor is asked for its repair hint, the same text the firewall gives an agent.
Dialogue events (user and assistant messages) are rows too; a spec that names none
does not judge them (agentguard/language/dialogue.py), so the monitor skips them and
their code is :data:`UNJUDGED`. The final column is ``verify_trace``'s verdict (online = offline), not the monitor's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agentguard.errors import AgentGuardError
from agentguard.language.ast import Spec
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.monitor import Monitor, Verdict
from agentguard.scoring.report import ComplianceReport
from agentguard.trace.model import Call, Trace

SATISFIED: Final = "s"
VIOLATED: Final = "v"
HOLDS_IF_ENDED: Final = "h"
"""Pending, but the run would satisfy the constraint if it ended here."""
OWES: Final = "p"
"""Pending, and ending here would violate it (an obligation is still open)."""
UNJUDGED: Final = "-"
"""A dialogue event the spec does not judge (it names no dialogue event)."""

TEXT_LIMIT: Final = 240
"""Arguments and results are cut to this many characters in a report."""


@dataclass(frozen=True, slots=True)
class Step:
    """One call (or dialogue event: ``kind`` user / assistant, ``args`` its text) as a
    report shows it. ``number`` is its place among the positions the spec judges, as
    ``verify_trace`` counts them ("call #4" in a constraint's detail), so a report numbers
    each call one way everywhere; None for a message a spec naming no dialogue event
    does not judge (a row without a number)."""

    name: str
    args: str
    result: str
    error: bool
    kind: str = "tool"
    number: int | None = None


@dataclass(frozen=True, slots=True)
class Violation:
    """Where a constraint became violated (``position`` None: at the end of the run)."""

    constraint: str
    position: int | None
    hint: str


@dataclass(frozen=True, slots=True)
class Timeline:
    """Verdict codes per constraint, one character per call (see the module constants)."""

    constraints: tuple[str, ...]
    steps: tuple[Step, ...]
    codes: Mapping[str, str]
    violations: tuple[Violation, ...]
    note: str = ""
    """Why the timeline is missing or partial (the monitor could not follow a constraint)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [[s.name, s.args, s.result, s.error, s.kind, s.number] for s in self.steps],
            "codes": dict(self.codes),
            "violations": [[v.constraint, v.position, v.hint] for v in self.violations],
            "note": self.note,
        }


def timeline(trace: Trace, spec: Spec, report: ComplianceReport) -> Timeline:
    """Step a fresh monitor over ``trace``; the violations follow ``report`` (offline).

    A monitor that cannot follow the spec (it raises while built or stepped) leaves the
    timeline partial, with a note saying where and why; the scores are not affected.
    """
    dialogue = spec_mentions_dialogue(spec)
    steps = _numbered(trace, dialogue)
    names = tuple(c.name for c in spec.constraints)
    try:
        monitor = Monitor(spec)
    except (AgentGuardError, RecursionError) as exc:
        return Timeline(names, steps, {}, _offline_violations(report), f"no timeline: {exc}")
    codes: dict[str, list[str]] = {n: [] for n in names}
    found: dict[str, Violation] = {}
    note = ""
    for position, call in enumerate(trace.calls):
        if not (dialogue or call.is_tool):  # as verify_trace: not seen by this spec
            for n in names:
                codes[n].append(UNJUDGED)
            continue
        try:
            peek = monitor.peek(call)
            for n in (n for n in peek.changed if peek.verdicts[n] is Verdict.VIOLATED):
                found.setdefault(n, Violation(n, position, _hint(monitor, n, call)))
            monitor.advance(call)
            ending = monitor.peek_end()
        except (AgentGuardError, RecursionError) as exc:
            note = f"timeline stops at call #{steps[position].number}: {exc or type(exc).__name__}"
            break
        for n in names:
            codes[n].append(_code(monitor.verdicts[n], ending.get(n)))
    failed = {c.name for c in report.violated}
    for n in names:
        if n in failed and n not in found:
            found[n] = Violation(n, None, "" if note else _hint(monitor, n, None))
    violations = tuple(found[n] for n in names if n in found and n in failed)
    return Timeline(names, steps, {n: "".join(v) for n, v in codes.items()}, violations, note)


def _hint(monitor: Monitor, name: str, call: Call | None) -> str:
    try:
        return monitor.hint(name, call, ending=call is None)
    except AgentGuardError:
        return ""


def _code(verdict: Verdict, holds_if_ended: bool | None) -> str:
    if verdict is Verdict.SATISFIED:
        return SATISFIED
    if verdict is Verdict.VIOLATED:
        return VIOLATED
    return HOLDS_IF_ENDED if holds_if_ended else OWES


def _offline_violations(report: ComplianceReport) -> tuple[Violation, ...]:
    return tuple(Violation(c.name, None, "") for c in report.violated)


def _numbered(trace: Trace, dialogue: bool) -> tuple[Step, ...]:
    """The steps, numbered as ``verify_trace`` numbers the positions it judges: every
    position for a spec that names a dialogue event, else the tool calls only."""
    out: list[Step] = []
    judged = 0
    for call in trace.calls:
        number = None
        if dialogue or call.is_tool:
            judged += 1
            number = judged
        out.append(_step(call, number))
    return tuple(out)


def _step(call: Call, number: int | None) -> Step:
    if not call.is_tool:
        text = short(call.args.get("text", ""))
        return Step(call.name, text, "", False, call.kind, number)
    result = "" if not call.has_result else short(call.result)
    return Step(call.name, short(dict(call.args)), result, call.error, number=number)


def short(value: Any) -> str:
    """Compact JSON (or text), cut to :data:`TEXT_LIMIT` characters."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


__all__ = [
    "HOLDS_IF_ENDED",
    "OWES",
    "SATISFIED",
    "TEXT_LIMIT",
    "UNJUDGED",
    "VIOLATED",
    "Step",
    "Timeline",
    "Violation",
    "timeline",
]
