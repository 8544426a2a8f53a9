"""The ``agentguard`` command line.

Exit codes (``check``): 0 every trace fully compliant; 1 some trace violates a
constraint; 2 the spec is invalid or the command is misused; 3 some trace records
could not be read (the readable ones are still scored and shown). When several apply,
the highest-priority one is returned: 2, then 3, then 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard._version import __version__
from agentguard.errors import (
    AgentGuardError,
    SourceLocation,
    SpecError,
    SpecSemanticError,
    SpecSyntaxError,
)

if TYPE_CHECKING:
    from rich.console import Console

    from agentguard.language.ast import Spec

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3

# Sub-commands contributed by other parts of the package: module -> `add_parser` function.
_PLUGINS = (
    "agentguard.pec.cli",
    "agentguard.bench.cli",
    "agentguard.demo.cli",
    "agentguard.cli.report",
    "agentguard.cli.mcp_proxy",
    "agentguard.cli.audit",
    "agentguard.cli.policy_test",
    "agentguard.cli.diff",
    "agentguard.mining.cli",
)


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=120)


def _err(message: str) -> None:
    """An error or a note on stderr; what it quotes of a file is shown, never interpreted."""
    from agentguard.terminal import printable

    print(f"agentguard: {printable(message, one_line=False)}", file=sys.stderr)


def _import_plugins(modules: Sequence[str]) -> bool:
    """Import user modules that register predicates and extractors (``--load``).

    ``MODULE`` is a module name, found from the current directory first (the console
    script, unlike ``python -m``, does not put it on ``sys.path``), or a ``.py`` file path.
    """
    for name in modules:
        try:
            _import_one(name)
        except Exception as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
            _err(f"--load {name}: {type(exc).__name__}: {exc}")
            return False
    return True


def _import_one(name: str) -> None:
    path = Path(name)
    if name.endswith(".py") or os.sep in name or (os.altsep and os.altsep in name):
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {name}")
        module_name = path.stem
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {name} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    importlib.import_module(name)


def _load(path: str, plugins: Sequence[str] = ()) -> Spec | None:
    from agentguard.language import load_spec

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


def cmd_check(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agentguard.cli import check
    from agentguard.report import batch
    from agentguard.terminal import json_text

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
    items = check.score_batch(args, spec, Console(stderr=True, soft_wrap=True))
    for item in items:
        if item.error is not None:
            _err(item.error)
        elif item.unjudged:
            _err(batch.unjudged_message(item))
    worst = EXIT_INPUT if any(i.error is not None for i in items) else EXIT_OK
    failed = check.batch_failed(items, args.fail_under)
    if failed and worst == EXIT_OK:
        worst = EXIT_VIOLATION
    if args.json:
        doc = batch.document(
            items, spec, by=args.by, fail_under=args.fail_under, extended=args.extended
        )
        print(json_text(doc))
        return worst
    check.render(
        _console(),
        items,
        spec,
        detail_limit=args.detail_limit,
        summary_only=args.summary,
        by=args.by,
    )
    return worst


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
    from agentguard.language import load_spec

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


def _tool_list(path: str) -> dict[str, Any] | None:
    """``lint --tools FILE``: the agent's tools, read as ``pec --tools`` reads them (None
    once the error is printed)."""
    from agentguard.pec.declarations import tool_schemas

    try:
        return tool_schemas(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, AgentGuardError) as exc:
        _err(f"{path}: cannot read tool definitions ({exc})")
        return None


def cmd_lint(args: argparse.Namespace) -> int:
    from rich.table import Table

    from agentguard.analysis import find_witness, lint_spec
    from agentguard.terminal import json_text

    spec = _load(args.spec, args.load)
    if spec is None:
        if args.json:
            print(json.dumps({"spec": None, **_problems_json(args.spec)}, indent=2))
        return EXIT_USAGE
    missing = _unregistered(spec)
    if missing:
        message = (
            f"{args.spec}: declared but not registered: {', '.join(missing)}; "
            "register them in a module and pass it with --load MODULE"
        )
        _err(message)
        if args.json:
            problems = {"spec": spec.name, "ok": False, "problems": [{"message": message}]}
            print(json.dumps(problems, indent=2))
        return EXIT_USAGE
    tools = _tool_list(args.tools) if args.tools else None
    if args.tools and tools is None:
        return EXIT_USAGE
    classes = _classify(spec)
    warnings = lint_spec(spec, tools=tools)
    witness = find_witness(spec) if args.witness else None
    status = EXIT_VIOLATION if args.strict and warnings else EXIT_OK
    if args.json:
        doc: dict[str, Any] = {
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
            "warnings": [w.to_dict() for w in warnings],
        }
        if witness is not None:
            doc["witness"] = {
                "found": witness.records is not None,
                "records": witness.records,
                "nonempty": witness.nonempty,
                "unsatisfiable": witness.proven_unsatisfiable,
                "conflict": list(witness.conflict),
                "message": witness.message,
            }
        print(json_text(doc))
        return status
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
    if warnings:
        found = Table(title=f"{len(warnings)} warning(s)", title_justify="left")
        for col in ("where", "kind", "constraint", "message"):
            found.add_column(col, overflow="fold")
        for w in warnings:
            found.add_row(f"{w.source}:{w.line}:{w.column}", w.kind, w.constraint or "-", w.message)
        console.print(found)
    if witness is not None:
        _print_witness(witness)
    return status


def _print_witness(witness: Any) -> None:
    """The witness as JSON records a user can paste into a test or a trace file."""
    print(f"witness: {witness.message}")
    for label, records in (("records", witness.records), ("non-empty", witness.nonempty)):
        if records is not None:
            print(f"{label}: {json.dumps(records, ensure_ascii=False)}")


def cmd_fmt(args: argparse.Namespace) -> int:
    from agentguard.language.printer import format_spec

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
    from agentguard.cli.check import add_load_option, add_scale_options
    from agentguard.trace.formats import format_names

    parser = argparse.ArgumentParser(
        prog="agentguard",
        description="Runtime firewall and trace verifier for tool-calling agents.",
    )
    parser.add_argument("--version", action="version", version=f"agentguard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="score trace files against a spec")
    check.add_argument("spec", help="the .ltl spec")
    check.add_argument(
        "traces",
        nargs="+",
        help="trace files (metrics records, agent and chat logs; see docs/traces.md)",
    )
    check.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document: every trace's Appendix B report, summary, groups",
    )
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
    check.add_argument(
        "--summary", action="store_true", help="print only the aggregates, no per-trace table"
    )
    add_scale_options(check)
    add_load_option(check)
    check.set_defaults(func=cmd_check)

    lint = sub.add_parser(
        "lint", help="parse and check a spec; warn about what it will really do (docs/lint.md)"
    )
    lint.add_argument("spec")
    lint.add_argument("--json", action="store_true", help="print the summary and warnings as JSON")
    lint.add_argument("--strict", action="store_true", help="exit 1 when there is any warning")
    lint.add_argument(
        "--witness",
        action="store_true",
        help="also print a shortest trace satisfying the spec (or the proof none does)",
    )
    lint.add_argument(
        "--tools",
        metavar="JSON",
        help="the agent's tools (function definitions, as pec --tools reads them): "
        "flag every spec tool outside them, and declarations their schemas contradict",
    )
    add_load_option(lint)
    lint.set_defaults(func=cmd_lint)

    fmt = sub.add_parser(
        "fmt", help="print a spec in canonical form (macros expanded, imports inlined)"
    )
    fmt.add_argument("spec")
    add_load_option(fmt)
    fmt.set_defaults(func=cmd_fmt)

    for module in _PLUGINS:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        mod.add_parser(sub)
    return parser


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    """The parser of the command ``name`` (None: no such command was given)."""
    for action in parser._actions:  # (argparse has no public way to its subparsers)
        if isinstance(action, argparse._SubParsersAction) and name is not None:
            found: argparse.ArgumentParser | None = action.choices.get(name)
            return found
    return None


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["mcp-proxy"]:  # first: other commands' imports would delay its server
        return int(importlib.import_module("agentguard.cli.mcp_proxy").main(words[1:]))
    parser = build_parser()
    args, extra = parser.parse_known_args(words)
    if extra:  # said by the command's own parser, with its usage, not the top level's
        command = _subparser(parser, getattr(args, "command", None))
        (command or parser).error(f"unrecognized arguments: {' '.join(extra)}")
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
