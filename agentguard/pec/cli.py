"""``agentguard pec EPISODES... --by method [--by model] [--json] [--csv PATH] [--plot PNG] [--html PATH]``.

Wired into the main CLI by :func:`add_parser`. Episodes carry their verdict
(``fed`` or per-call ``executable``) or are replayed by an oracle: ``--bfcl``
(BFCL-v3 multi-turn backends) or ``--tools FILE.json`` (JSON Schema function
definitions) or ``--spec FILE.ltl`` (tool declarations). Exit codes follow the
main CLI: 0 every record scored; 2 misuse or nothing could be scored; 3 some
records could not be read or replayed (they are listed, the rest are scored).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.text import Text

from agentguard.errors import AgentGuardError, TraceRecordError
from agentguard.pec.episode import Episode, Scored
from agentguard.pec.loaders import load_episodes
from agentguard.pec.oracle import Oracle
from agentguard.pec.report import build_report, render, write_csv

EXIT_OK, EXIT_USAGE, EXIT_INPUT = 0, 2, 3

PROGRESS_THRESHOLD = 50
"""Replays of at least this many episodes show a progress bar (on a terminal)."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``pec`` on the main parser's sub-commands."""
    parser = subparsers.add_parser(
        "pec",
        help="prefix executability: TER, FED, AUC-PEC, RR, PEC@k with intervals",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    configure(parser)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("episodes", nargs="+", metavar="EPISODES", help="JSON Lines episode files")
    parser.add_argument(
        "--by",
        action="append",
        metavar="LABEL",
        help="group by this episode label (repeatable; default: method)",
    )
    parser.add_argument("--json", action="store_true", help="print plain JSON only")
    parser.add_argument("--csv", metavar="PATH", help="also write the table as CSV")
    parser.add_argument("--plot", metavar="PNG", help="also draw the PEC curves (needs [plot])")
    parser.add_argument(
        "--html", metavar="PATH", help="also write a self-contained HTML report (curves, episodes)"
    )
    parser.add_argument("--depths", default="1,2,3,4", help="PEC@k columns (default 1,2,3,4)")
    parser.add_argument(
        "--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--baseline",
        metavar="GROUP",
        help="also show paired differences against this group (e.g. react, or 'react / gpt-4.1')",
    )
    oracle = parser.add_mutually_exclusive_group()
    oracle.add_argument(
        "--bfcl",
        action="store_true",
        help="replay every episode against BFCL-v3 multi-turn backends",
    )
    oracle.add_argument("--tools", metavar="JSON", help="replay with schemas from function defs")
    oracle.add_argument("--spec", metavar="LTL", help="replay with an .ltl spec's tool decls")
    parser.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="N",
        help="replay on N worker processes (same results as serial; default 1)",
    )
    parser.set_defaults(func=run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a count >= 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Load, score (replaying if asked), report. Returns the exit code."""
    out = Console(highlight=False, soft_wrap=False, width=200)
    err = Console(stderr=True, highlight=False)
    try:
        depths = _depths(args.depths)
        loaded = load_episodes(*args.episodes)
        errors: list[Exception] = [x.error for x in loaded if x.error is not None]
        oracle = _oracle(args)
        scored: list[Scored] = []
        pending: list[tuple[str, Episode]] = []
        for item in loaded:
            if item.episode is None:
                continue
            if oracle is None and item.scored is None:
                errors.append(
                    TraceRecordError(
                        "no executability recorded ('fed' or per-call 'executable'); "
                        "replay it with --bfcl, --tools or --spec",
                        source=item.source,
                        record=item.record,
                    )
                )
            elif oracle is None and item.scored is not None:
                scored.append(item.scored)
            else:
                pending.append((item.where, item.episode))
        if oracle is not None and getattr(args, "jobs", 1) > 1:
            scored += _replay_pool(args, pending, errors)
        elif oracle is not None:
            scored += _replay(oracle, pending, err, errors, quiet=args.json)
        if not scored:
            _report_errors(errors, err, args.json)
            raise AgentGuardError("no episode could be scored")
        report = build_report(
            scored,
            args.by or ["method"],
            table_depths=depths,
            resamples=args.resamples,
            seed=args.seed,
            baseline=args.baseline,
        )
        if args.csv:
            write_csv(report, args.csv)
        if args.plot:
            from agentguard.pec.plot import plot_pec

            plot_pec(report, args.plot)
        if args.html:
            from agentguard.report.html import pec_html, write_html

            write_html(pec_html(report, scored), args.html)
    except AgentGuardError as exc:
        err.print(Text("error: ", style="red") + Text(str(exc)))
        return EXIT_USAGE
    if args.json:
        payload: dict[str, Any] = report.to_dict()
        payload["errors"] = [str(e) for e in errors]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        render(report, out)
        if args.csv:
            out.print(f"CSV written to {args.csv}")
        if args.plot:
            out.print(f"PEC plot written to {args.plot}")
        if args.html:
            out.print(f"HTML report written to {args.html}")
        _report_errors(errors, err, False)
    return EXIT_INPUT if errors else EXIT_OK


def _depths(text: str) -> tuple[int, ...]:
    try:
        depths = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise AgentGuardError(f"--depths must be comma-separated integers, got {text!r}") from None
    if not depths or min(depths) < 1:
        raise AgentGuardError("--depths needs positive depths, e.g. 1,2,3,4")
    return depths


def _oracle(args: argparse.Namespace) -> Oracle | None:
    if args.bfcl:
        from agentguard.pec import bfcl

        return bfcl.bfcl_oracle(bfcl.load_all())
    if args.tools:
        from agentguard.pec.schema import schemas_from_json_schema

        path = Path(args.tools)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AgentGuardError(f"{path}: cannot read tool definitions ({exc})") from None
        return Oracle.build(tools=schemas_from_json_schema(doc))
    if args.spec:
        from agentguard import load_spec
        from agentguard.pec.schema import schemas_from_spec

        return Oracle.build(tools=schemas_from_spec(load_spec(args.spec)))
    return None


def _replay(
    oracle: Oracle,
    pending: Sequence[tuple[str, Episode]],
    err: Console,
    errors: list[Exception],
    *,
    quiet: bool,
) -> list[Scored]:
    show = not quiet and len(pending) >= PROGRESS_THRESHOLD and err.is_terminal
    items = (
        track(pending, description="replaying", console=err, transient=True) if show else pending
    )
    scored = []
    for where, episode in items:
        try:
            scored.append(oracle.score(episode))
        except AgentGuardError as exc:
            errors.append(AgentGuardError(f"{where}: {exc}"))
    return scored


def _replay_pool(
    args: argparse.Namespace, pending: Sequence[tuple[str, Episode]], errors: list[Exception]
) -> list[Scored]:
    """``_replay`` on ``args.jobs`` processes; each worker builds its own oracle."""
    from agentguard.scale.pool import map_chunks

    chosen = argparse.Namespace(bfcl=args.bfcl, tools=args.tools, spec=args.spec)
    outcomes = map_chunks(
        _replay_chunk, pending, args.jobs, initializer=_init_oracle, initargs=(chosen,)
    )
    scored = []
    for outcome in outcomes:
        if isinstance(outcome, str):
            errors.append(AgentGuardError(outcome))
        else:
            scored.append(outcome)
    return scored


_worker_oracle: list[Oracle] = []


def _init_oracle(chosen: argparse.Namespace) -> None:
    oracle = _oracle(chosen)
    if oracle is None:  # pragma: no cover - only called with an oracle option set
        raise AgentGuardError("--jobs replays need --bfcl, --tools or --spec")
    _worker_oracle[:] = [oracle]


def _replay_chunk(pending: list[tuple[str, Episode]]) -> list[Scored | str]:
    """Each episode's score, or the error text (as ``_replay`` words it)."""
    oracle = _worker_oracle[0]
    out: list[Scored | str] = []
    for where, episode in pending:
        try:
            out.append(oracle.score(episode))
        except AgentGuardError as exc:
            out.append(f"{where}: {exc}")
    return out


def _report_errors(errors: Sequence[Exception], err: Console, as_json: bool) -> None:
    if as_json or not errors:
        return
    err.print(f"{len(errors)} record(s) not scored:")
    for e in errors:
        err.print(f"  {e}", markup=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m agentguard.pec.cli``) until the main CLI wires it."""
    parser = argparse.ArgumentParser(prog="agentguard")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["add_parser", "configure", "main", "run"]
