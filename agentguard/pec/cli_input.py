"""What ``agentguard pec`` reads: the episode files it names, and what it says about them.

Episode files, and with ``--bfcl`` BFCL's own result files and directories
(:func:`load_named`); ``--no-tool-allowed`` selectors (:func:`allow_no_tool`); episodes
that carry no verdict while no oracle was chosen (:func:`explain_unjudged`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentguard.errors import AgentGuardError, TraceRecordError
from agentguard.pec.episode import Episode, Scored
from agentguard.pec.loaders import LoadedEpisode, load_episodes
from agentguard.pec.toolsandbox_files import is_toolsandbox_path, iter_toolsandbox


def load_named(args: argparse.Namespace) -> list[LoadedEpisode]:
    """Episode files, and with ``--bfcl`` BFCL's own result files and directories."""
    from agentguard.pec.bfcl_files import RESULT_FILE

    if getattr(args, "toolsandbox", False):
        return _load_toolsandbox(args)
    if not args.bfcl:
        for path in args.episodes:
            if is_toolsandbox_path(path):
                continue
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


def _load_toolsandbox(args: argparse.Namespace) -> list[LoadedEpisode]:
    """ToolSandbox runs; a scenario its run's summary does not list is evaluated by ToolSandbox."""
    from agentguard.pec.toolsandbox_env import shared_worker

    worker = shared_worker(args.toolsandbox_python)

    def evaluate(file: Path, scenario: str) -> float:
        return worker.evaluate(file, scenario).similarity

    loaded: list[LoadedEpisode] = []
    for path in args.episodes:
        if is_toolsandbox_path(path):
            loaded += iter_toolsandbox(path, evaluate=evaluate, threshold=args.toolsandbox_success)
        else:
            loaded += load_episodes(path)
    return loaded


def allow_no_tool(item: LoadedEpisode, selectors: Sequence[str]) -> LoadedEpisode:
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


def explain_unjudged(unjudged: Sequence[LoadedEpisode], *, judged: int) -> list[Exception]:
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
            "--toolsandbox (ToolSandbox runs), "
            "--spec FILE.ltl or --tools FILE.json, or judge recorded outcomes only with "
            "--recorded; or record 'fed' in each episode"
        )
    return [
        TraceRecordError(
            "no executability recorded ('fed' or per-call 'executable'); "
            "replay it with --bfcl, --tau2, --toolsandbox, --tools or --spec",
            source=item.source,
            record=item.record,
        )
        for item in unjudged
    ]


__all__ = ["allow_no_tool", "explain_unjudged", "load_named"]
