"""How ``agentguard pec`` replays: the oracle its options choose, on one process or several.

``--bfcl``, ``--tau2``, ``--toolsandbox``, ``--recorded``, ``--tools`` or ``--spec`` choose the oracle
(:func:`oracle_for_args`; tau2 needs one per domain); :func:`replay_serial` scores the
episodes here (with a progress bar on a terminal), :func:`replay_pool` on ``--jobs``
worker processes, each building its own oracle. An episode that cannot be replayed is
an error naming its place; the others are still scored.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import track

from agentguard.errors import AgentGuardError
from agentguard.pec.environment import ERROR_RULES, ErrorRule
from agentguard.pec.episode import Episode, Scored
from agentguard.pec.errors import ReplayError
from agentguard.pec.oracle import Oracle

PROGRESS_THRESHOLD = 50
"""Replays of at least this many episodes show a progress bar (on a terminal)."""

OracleFor = Callable[[Episode], Oracle]
"""The oracle that judges one episode (tau2 needs one per domain, ToolSandbox one per scenario)."""


def oracle_for_args(args: argparse.Namespace) -> OracleFor | None:
    if args.tau2:
        return _tau2_oracles(ERROR_RULES[args.error_rule or "raised"])
    if getattr(args, "toolsandbox", False):
        from agentguard.pec.toolsandbox_env import shared_worker, toolsandbox_oracles

        return toolsandbox_oracles(shared_worker(args.toolsandbox_python))
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


def replay_serial(
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


def replay_pool(
    args: argparse.Namespace, pending: Sequence[tuple[str, Episode]], errors: list[Exception]
) -> list[tuple[Scored, str]]:
    """``replay_serial`` on ``args.jobs`` processes; each worker builds its own oracle."""
    from agentguard.scale.pool import map_chunks

    chosen = argparse.Namespace(
        bfcl=args.bfcl,
        tools=args.tools,
        spec=args.spec,
        tau2=args.tau2,
        toolsandbox=getattr(args, "toolsandbox", False),
        toolsandbox_python=getattr(args, "toolsandbox_python", None),
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
    oracle = oracle_for_args(chosen)
    if oracle is None:  # pragma: no cover - only called with an oracle option set
        raise AgentGuardError("--jobs replays need --bfcl, --tau2, --recorded, --tools or --spec")
    _worker_oracle[:] = [oracle]


def _replay_chunk(pending: list[tuple[str, Episode]]) -> list[tuple[Scored, str] | str]:
    """Each episode's score with its place, or the error text (as ``replay_serial`` words it)."""
    oracle_for = _worker_oracle[0]
    out: list[tuple[Scored, str] | str] = []
    for where, episode in pending:
        try:
            out.append((oracle_for(episode).score(episode), where))
        except AgentGuardError as exc:
            out.append(f"{where}: {exc}")
    return out


__all__ = ["PROGRESS_THRESHOLD", "OracleFor", "oracle_for_args", "replay_pool", "replay_serial"]
