"""``agentguard test SPEC CASES...``: policy tests, one expected decision per proposed call.

Wired into the main CLI by :func:`add_parser` (see ``_PLUGINS`` in ``cli/main.py``).
A case file is JSON (format in docs/policy-tests.md)::

    {"cases": [{"name": "refund before verifying is blocked",
                "calls": [{"tool": "issue_refund", "args": {"order_id": "A1"},
                           "expect": {"action": "block", "violations": ["identity_first"]}},
                          {"tool": "verify_identity", "args": {"customer_id": "C"},
                           "result": {"ok": true}, "expect": "allow"}],
                "compliance": 1.0}]}

Each case runs on a fresh :class:`~agentguard.enforcement.firewall.Firewall` (options
from the case's ``"firewall"`` object): every call is proposed, compared with its
expectation, and, if it executes, completed with its ``result`` (or ``error``). Exit
codes: 0 every expectation met; 1 a mismatch (shown as expected/got lines); 2 an invalid
spec or misuse; 3 a case file that cannot be read (named with the case and call).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.enforcement.decision import Action, Decision
from agentguard.errors import AgentGuardError
from agentguard.language.ast import Spec
from agentguard.terminal import json_text, printable

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3
ACTIONS = {a.value: a for a in Action} | {"override": Action.OVERRIDE}


class CaseFileError(AgentGuardError, ValueError):
    """A case file is not valid JSON or does not have the case format."""


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expectation that did not hold."""

    where: str  # "call 2 issue_refund", "late violations of call 2", "compliance"
    expected: Any
    got: Any

    def to_dict(self) -> dict[str, Any]:
        return {"where": self.where, "expected": self.expected, "got": self.got}


@dataclass(frozen=True, slots=True)
class CaseResult:
    file: str
    name: str
    mismatches: tuple[Mismatch, ...] = ()
    decisions: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "name": self.name,
            "passed": self.passed,
            "mismatches": [m.to_dict() for m in self.mismatches],
            "decisions": list(self.decisions),
        }


def _expectation(raw: Any, where: str) -> dict[str, Any]:
    """``"block"`` or ``{"action": "block", "violations": [...], ...}``, checked."""
    expect = {"action": raw} if isinstance(raw, str) else raw
    if not isinstance(expect, Mapping) or not isinstance(expect.get("action"), str):
        raise CaseFileError(f'{where}: "expect" must be an action or an object with "action"')
    if expect["action"] not in ACTIONS:
        raise CaseFileError(
            f"{where}: unknown action {expect['action']!r} (one of {', '.join(ACTIONS)})"
        )
    return dict(expect)


def _observed(d: Decision, expect: Mapping[str, Any]) -> dict[str, Any]:
    """The decision's fields that the expectation names."""
    got: dict[str, Any] = {"action": d.action.value}
    if "violations" in expect:
        got["violations"] = sorted(v.constraint for v in d.violations)
    if "escalated" in expect:
        got["escalated"] = d.escalated
    if "message_contains" in expect:
        text = str(expect["message_contains"])
        got["message_contains"] = text if text in d.message else d.message
    return got


def _wanted(expect: Mapping[str, Any]) -> dict[str, Any]:
    """The expectation in the shape of :func:`_observed` (violations as a sorted set)."""
    out = {k: expect[k] for k in ("action", "escalated", "message_contains") if k in expect}
    out["action"] = ACTIONS[out["action"]].value
    if "violations" in expect:
        out["violations"] = sorted(expect["violations"])
    return out


def run_case(spec: Spec, case: Mapping[str, Any], file: str, index: int) -> CaseResult:
    """Run one case on a fresh firewall; every expectation is compared, not just the first."""
    from agentguard.enforcement.firewall import Firewall

    name = str(case.get("name") or f"case {index + 1}")
    where = f"{file}: case {name!r}"
    calls = case.get("calls")
    if not isinstance(calls, list):
        raise CaseFileError(f'{where}: "calls" must be a list')
    options = case.get("firewall", {})
    if not isinstance(options, Mapping):
        raise CaseFileError(f'{where}: "firewall" must be an object of Firewall options')
    fw = Firewall(spec, **dict(options))
    mismatches: list[Mismatch] = []
    decisions: list[dict[str, Any]] = []
    for i, call in enumerate(calls, start=1):
        at = f"call {i}"
        if isinstance(call, Mapping) and "message" in call:  # a dialogue event, observed
            if call["message"] not in ("user", "assistant"):
                raise CaseFileError(f'{where}, {at}: "message" is "user" or "assistant"')
            fw.observe(call["message"], call.get("text", ""))
            continue
        if not isinstance(call, Mapping) or not isinstance(call.get("tool"), str):
            raise CaseFileError(f'{where}, {at}: a call is an object with a "tool" name')
        args = call.get("args", {})
        if not isinstance(args, Mapping):
            raise CaseFileError(f'{where}, {at}: "args" must be an object')
        at = f"call {i} {call['tool']}"
        decision = fw.propose(call["tool"], args)
        decisions.append({"call": i, "tool": call["tool"], **decision.to_dict()})
        if "expect" in call:
            expect = _expectation(call["expect"], f"{where}, {at}")
            wanted, got = _wanted(expect), _observed(decision, expect)
            if wanted != got:
                mismatches.append(Mismatch(at, wanted, got))
        if decision.executes:
            error = call.get("error")
            late = fw.complete(
                decision, call.get("result"), error=None if error is None else str(error)
            )
            if "late" in call and sorted(call["late"]) != sorted(v.constraint for v in late):
                mismatches.append(
                    Mismatch(f"late violations of {at}", call["late"], [v.constraint for v in late])
                )
    report = fw.finish(case.get("metrics"))
    if "compliance" in case:
        expected = float(case["compliance"])
        if abs(report.compliance.score - expected) > 1e-9:
            mismatches.append(Mismatch("compliance", expected, report.compliance.score))
    if "stopped" in case and bool(case["stopped"]) != report.stopped:
        mismatches.append(Mismatch("stopped", bool(case["stopped"]), report.stopped))
    return CaseResult(file, name, tuple(mismatches), tuple(decisions))


def load_cases(path: Path) -> list[Mapping[str, Any]]:
    """The cases of one file, or a :class:`CaseFileError` naming the file and line."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CaseFileError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseFileError(f"{path}: cannot read: {exc}") from None
    cases = doc.get("cases") if isinstance(doc, Mapping) else doc
    if not isinstance(cases, list) or not all(isinstance(c, Mapping) for c in cases):
        raise CaseFileError(f'{path}: expected {{"cases": [{{...}}, ...]}}')
    return cases


def run_files(spec: Spec, paths: Sequence[Path]) -> list[CaseResult]:
    results = []
    for path in paths:
        for index, case in enumerate(load_cases(path)):
            try:
                results.append(run_case(spec, case, str(path), index))
            except CaseFileError:
                raise
            except (TypeError, AgentGuardError) as exc:  # a bad Firewall option or value
                raise CaseFileError(f"{path}: case {index + 1}: {exc}") from None
    return results


def render(results: Sequence[CaseResult]) -> str:
    lines = []
    for r in results:
        if r.passed:
            lines.append(f"PASS {r.file}: {r.name}")
            continue
        lines.append(f"FAIL {r.file}: {r.name}")
        for m in r.mismatches:
            lines.append(f"  {m.where}:")
            lines.append(f"    - expected: {json.dumps(m.expected)}")
            lines.append(f"    + got:      {json.dumps(m.got)}")
    passed = sum(r.passed for r in results)
    lines.append(f"{passed} passed, {len(results) - passed} failed")
    return "\n".join(lines)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``test`` on the main parser's sub-commands."""
    parser = subparsers.add_parser(
        "test",
        help="run policy test cases: expected decisions for proposed calls",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("spec", help="the .ltl spec")
    parser.add_argument("cases", nargs="+", help="case files (JSON, see docs/policy-tests.md)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    from agentguard.cli.check import add_load_option  # imported with the command

    add_load_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from agentguard.cli import main as cli

    spec = cli._load(args.spec, args.load)
    if spec is None:
        return EXIT_USAGE
    try:
        results = run_files(spec, [Path(p) for p in args.cases])
    except CaseFileError as exc:
        print(f"agentguard: {printable(exc, one_line=False)}", file=sys.stderr)
        return EXIT_INPUT
    code = EXIT_OK if all(r.passed for r in results) else EXIT_MISMATCH
    if args.json:
        doc = {
            "spec": args.spec,
            "passed": sum(r.passed for r in results),
            "failed": sum(not r.passed for r in results),
            "cases": [r.to_dict() for r in results],
        }
        print(json_text(json.loads(json.dumps(doc, default=str))))
    else:
        print(printable(render(results), one_line=False))
    return code
