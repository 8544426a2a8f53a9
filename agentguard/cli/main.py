"""The ``agentguard`` command line.

Exit codes (``check``): 0 every trace fully compliant; 1 some trace violates a
constraint; 2 the spec is invalid or the command is misused; 3 some trace records
could not be read (the readable ones are still scored and shown). When several apply,
the highest-priority one is returned: 2, then 3, then 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from agentguard import __version__
from agentguard.errors import (
    AgentGuardError,
    SourceLocation,
    SpecError,
    SpecSemanticError,
    SpecSyntaxError,
    TraceError,
)
from agentguard.language import load_spec
from agentguard.language.ast import Spec
from agentguard.language.printer import format_spec
from agentguard.scoring import verify_trace
from agentguard.trace.formats import format_names
from agentguard.trace.loaders import iter_trace_file

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3

# Sub-commands contributed by other parts of the package: module -> `add_parser` function.
_PLUGINS = (
    "agentguard.pec.cli",
    "agentguard.bench.cli",
    "agentguard.demo.cli",
    "agentguard.cli.mcp_proxy",
)


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False, width=120)


def _err(message: str) -> None:
    print(f"agentguard: {message}", file=sys.stderr)


def _import_plugins(modules: Sequence[str]) -> bool:
    """Import user modules that register predicates and extractors (``--load``)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
            _err(f"--load {name}: {type(exc).__name__}: {exc}")
            return False
    return True


def _load(path: str, plugins: Sequence[str] = ()) -> Spec | None:
    if not _import_plugins(plugins):
        return None
    try:
        return load_spec(path)
    except SpecError as exc:
        _err(str(exc))
        return None


# ------------------------------------------------------------------------- check
def _unregistered(spec: Spec) -> list[str]:
    """Predicates and extractors the spec declares that nothing registered."""
    from agentguard.semantics.registry import default_registry as reg

    missing = [
        f"predicate {n}"
        for n, _ in spec.predicates
        if n not in reg.predicates and n not in reg.context_predicates
    ]
    missing += [f"extractor {n}" for n in spec.extractors if n not in reg.extractors]
    return missing


def _unjudged(spec: Any, trace: Any) -> list[str]:
    """Constraints that test results, when the trace's results were redacted."""
    if not trace.metrics.get("redacted_results"):
        return []
    return [c.name for c in spec.constraints if _reads_results(c.formula)]


def _reads_results(node: Any) -> bool:
    """Does an AST node test a call's result (``result...`` field, ``results(...)``)?"""
    from agentguard.language import ast as A

    if isinstance(node, A.FieldRef):
        return node.is_result
    if isinstance(node, A.Domain):
        return node.extractor == "results"
    if isinstance(node, (tuple, list)):
        return any(_reads_results(n) for n in node)
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return False
    return any(_reads_results(getattr(node, f)) for f in fields if f != "span")


def cmd_check(args: argparse.Namespace) -> int:
    spec = _load(args.spec, args.load)
    if spec is None:
        return EXIT_USAGE
    missing = _unregistered(spec)
    if missing:
        _err(
            f"{args.spec}: declared but not registered: {', '.join(missing)}; "
            "register them in a module and pass it with --load MODULE"
        )
        return EXIT_USAGE
    console = _console()
    results: list[dict[str, Any]] = []
    worst = EXIT_OK
    for path in args.traces:
        try:
            records = list(
                iter_trace_file(path, format=args.format, final_answer=args.final_answer)
            )
        except TraceError as exc:
            _err(str(exc))
            worst = max(worst, EXIT_INPUT)
            results.append({"source": path, "record": None, "error": str(exc)})
            continue
        if not records:
            _err(f"{path}: no trace records in the file")
            worst = max(worst, EXIT_INPUT)
            results.append({"source": path, "record": None, "error": "no trace records"})
            continue
        for rec in records:
            if rec.error is not None or rec.trace is None:
                _err(str(rec.error))
                worst = max(worst, EXIT_INPUT)
                results.append(
                    {"source": rec.source, "record": rec.record, "error": str(rec.error)}
                )
                continue
            report = verify_trace(rec.trace, spec)
            if not report.passed and worst == EXIT_OK:
                worst = EXIT_VIOLATION
            entry: dict[str, Any] = {"source": rec.source, "record": rec.record, "report": report}
            unjudged = _unjudged(spec, rec.trace)
            if unjudged:
                redacted = list(rec.trace.metrics.get("redacted_results", ()))
                _err(
                    f"{rec.source}: the log keeps only digests of the results at positions "
                    f"{redacted} (written under redaction), so these constraints, which test "
                    f"results, cannot be judged from it: {', '.join(unjudged)}"
                )
                entry["unjudged"] = unjudged
            results.append(entry)
    if args.json:
        out = [
            {"source": r["source"], "record": r["record"], "error": r["error"]}
            if "error" in r
            else {
                "source": r["source"],
                "record": r["record"],
                **r["report"].to_dict(extended=args.extended),
                **({"unjudged": r["unjudged"]} if "unjudged" in r else {}),
            }
            for r in results
        ]
        print(json.dumps(out if len(out) != 1 else out[0], indent=2, ensure_ascii=False))
        return worst
    reports = [r for r in results if "report" in r]
    if len(reports) > args.detail_limit:
        _print_summary(console, reports, len(results) - len(reports))
        return worst
    for r in reports:
        rep = r["report"]
        colour = _COLOURS[rep.label]
        table = Table(
            title=f"{r['source']}:{r['record']}  score [bold {colour}]{rep.score:.3f} {rep.label}[/]",
            title_justify="left",
        )
        for col in ("constraint", "layer", "weight", "result", "detail"):
            table.add_column(col, overflow="fold")
        for c in rep.constraints:
            mark = "[green]pass[/]" if c.passed else "[red]FAIL[/]"
            table.add_row(c.name, c.layer or "-", f"{c.weight:g}", mark, c.detail)
        console.print(table)
        for problem in rep.tool_problems:
            console.print(f"[yellow]tool declaration[/] {problem}")
        console.print(f"tool sequence: {_sequence(rep.tool_sequence)}\n")
    return worst


_COLOURS = {"FULL": "green", "PARTIAL": "yellow", "NONE": "red"}


def _sequence(names: tuple[str, ...], head: int = 30, tail: int = 10) -> str:
    """The tool sequence, elided in the middle when long (a 10k-call run fits one line)."""
    if not names:
        return "(empty)"
    if len(names) <= head + tail:
        return " -> ".join(names)
    skipped = len(names) - head - tail
    return (
        " -> ".join(names[:head]) + f" -> ... ({skipped} more) ... -> " + " -> ".join(names[-tail:])
    )


def _print_summary(console: Console, reports: list[dict[str, Any]], unreadable: int) -> None:
    """Many traces: one row per trace, then pass rates per constraint."""
    runs = Table(
        title=f"{len(reports)} trace{'s' if len(reports) != 1 else ''}", title_justify="left"
    )
    for col in ("trace", "score", "label", "violated"):
        runs.add_column(col, overflow="fold")
    passed: dict[str, int] = {}
    layers: dict[str, str] = {}
    for r in reports:
        rep = r["report"]
        runs.add_row(
            f"{r['source']}:{r['record']}",
            f"{rep.score:.3f}",
            f"[{_COLOURS[rep.label]}]{rep.label}[/]",
            ", ".join(c.name for c in rep.violated) or "-",
        )
        for c in rep.constraints:
            passed[c.name] = passed.get(c.name, 0) + int(c.passed)
            layers[c.name] = c.layer or "-"
    console.print(runs)
    n = len(reports)
    scores = [r["report"].score for r in reports]
    labels = [r["report"].label for r in reports]
    console.print(
        f"mean score {sum(scores) / n:.3f}; FULL {labels.count('FULL')}, "
        f"PARTIAL {labels.count('PARTIAL')}, NONE {labels.count('NONE')}"
        + (f"; {unreadable} record(s) unreadable" if unreadable else "")
    )
    rates = Table(title="pass rate per constraint", title_justify="left")
    for col in ("constraint", "layer", "passed", "rate"):
        rates.add_column(col)
    for name, ok in passed.items():
        rates.add_row(name, layers[name], f"{ok}/{n}", f"{ok / n:.1%}")
    console.print(rates)


# -------------------------------------------------------------------------- lint
def _classify(spec: Spec) -> dict[str, str]:
    """safety / mixed / liveness per constraint (see docs/monitor.md)."""
    from agentguard.monitor import classify

    out: dict[str, str] = {}
    for c in spec.constraints:
        try:
            out[c.name] = str(classify(c.formula))
        except Exception as exc:  # noqa: BLE001 - lint reports a classifier gap, never crashes
            out[c.name] = f"unknown ({type(exc).__name__})"
    return out


def _problems_json(path: str) -> dict[str, Any]:
    """The spec's problems as data, for `lint --json` on an invalid spec."""
    try:
        load_spec(path)
    except SpecSyntaxError as exc:
        return {"ok": False, "problems": [_located(exc.message, exc.location)]}
    except SpecSemanticError as exc:
        return {"ok": False, "problems": [_located(p.message, p.location) for p in exc.problems]}
    except SpecError as exc:
        return {"ok": False, "problems": [{"message": str(exc)}]}
    return {"ok": True, "problems": []}


def _located(message: str, loc: SourceLocation | None) -> dict[str, Any]:
    if loc is None:
        return {"message": message}
    return {"message": message, "file": loc.source, "line": loc.line, "column": loc.column}


def cmd_lint(args: argparse.Namespace) -> int:
    spec = _load(args.spec, args.load)
    if spec is None:
        if args.json:
            print(json.dumps({"spec": None, **_problems_json(args.spec)}, indent=2))
        return EXIT_USAGE
    classes = _classify(spec)
    if args.json:
        print(
            json.dumps(
                {
                    "spec": spec.name,
                    "ok": True,
                    "tools": [t.name for t in spec.tools],
                    "total_weight": spec.total_weight,
                    "constraints": [
                        {
                            "name": c.name,
                            "layer": c.layer,
                            "weight": c.weight,
                            "severity": str(c.severity),
                            "class": classes.get(c.name),
                        }
                        for c in spec.constraints
                    ],
                },
                indent=2,
            )
        )
        return EXIT_OK
    console = _console()
    table = Table(title=f"{args.spec}: spec {spec.name or '(unnamed)'} — OK", title_justify="left")
    for col in ("constraint", "layer", "weight", "severity", "class"):
        table.add_column(col)
    for c in spec.constraints:
        table.add_row(
            c.name, c.layer or "-", f"{c.weight:g}", str(c.severity), classes.get(c.name, "-")
        )
    console.print(table)
    console.print(
        f"{len(spec.constraints)} constraint(s), total weight {spec.total_weight:g}, "
        f"{len(spec.tools)} declared tool(s)"
    )
    return EXIT_OK


def cmd_fmt(args: argparse.Namespace) -> int:
    spec = _load(args.spec, args.load)
    if spec is None:
        return EXIT_USAGE
    sys.stdout.write(format_spec(spec))
    return EXIT_OK


# -------------------------------------------------------------------------- main
def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentguard",
        description="Runtime firewall and trace verifier for tool-calling agents.",
    )
    parser.add_argument("--version", action="version", version=f"agentguard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    load_help = (
        "import MODULE first (it registers the spec's predicates and extractors); repeatable"
    )

    check = sub.add_parser("check", help="score trace files against a spec")
    check.add_argument("spec", help="the .ltl spec")
    check.add_argument(
        "traces",
        nargs="+",
        help="trace files (metrics records, agent and chat logs; see docs/traces.md)",
    )
    check.add_argument("--json", action="store_true", help="print the Appendix B JSON report(s)")
    check.add_argument(
        "--extended", action="store_true", help="with --json: add severity, message, error"
    )
    check.add_argument(
        "--format",
        choices=format_names(),
        default=None,
        help="read every trace as this format instead of detecting it (see docs/traces.md)",
    )
    check.add_argument(
        "--no-final-answer",
        dest="final_answer",
        action="store_false",
        help="do not turn a run's closing text answer into a final_answer call",
    )
    check.add_argument(
        "--detail-limit",
        type=_non_negative,
        default=5,
        metavar="N",
        help="show a full table per trace up to N traces, else one summary (default 5)",
    )
    check.add_argument("--load", action="append", default=[], metavar="MODULE", help=load_help)
    check.set_defaults(func=cmd_check)

    lint = sub.add_parser("lint", help="parse and check a spec; summarise its constraints")
    lint.add_argument("spec")
    lint.add_argument("--json", action="store_true")
    lint.add_argument("--load", action="append", default=[], metavar="MODULE", help=load_help)
    lint.set_defaults(func=cmd_lint)

    fmt = sub.add_parser(
        "fmt", help="print a spec in canonical form (macros expanded, imports inlined)"
    )
    fmt.add_argument("spec")
    fmt.add_argument("--load", action="append", default=[], metavar="MODULE", help=load_help)
    fmt.set_defaults(func=cmd_fmt)

    for module in _PLUGINS:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except AgentGuardError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except OSError as exc:  # an output path that cannot be written, a missing input
        _err(f"{exc.filename or ''}: {exc.strerror or exc}" if exc.filename else str(exc))
        return EXIT_USAGE
    except BrokenPipeError:  # pragma: no cover - `agentguard ... | head`
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
