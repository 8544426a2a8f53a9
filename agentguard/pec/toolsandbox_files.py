"""ToolSandbox runs read as episodes, one per scenario run, as ToolSandbox writes them.

ToolSandbox's CLI writes a run directory ``agent_<agent>_user_<user>_<timestamp>/`` with
``result_summary.json`` (its evaluation of every scenario: ``similarity``, milestone and
minefield similarity, categories) and ``trajectories/<scenario>/execution_context.json``.
Either the directory or single ``execution_context.json`` files can be named.

* calls: the agent's, from the execution context (:mod:`agentguard.trace.formats.toolsandbox`);
  the user's ``end_conversation`` is kept as a user call (replayed, never judged);
* task id: the scenario;
* success ``Y``: ToolSandbox's own evaluation reaches :data:`SUCCESS_SIMILARITY` (every
  milestone matched exactly, no minefield); read from ``result_summary.json`` when it is
  there, else computed by ToolSandbox (``evaluate``, the worker's milestone evaluation);
* labels: ``dataset=toolsandbox``, ``model`` (the agent) and ``user`` from the run
  directory's name, ``run`` (that name), ``categories`` (ToolSandbox's, joined by ``+``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.pec.episode import Episode, LoadedEpisode
from agentguard.trace.formats import parse
from agentguard.trace.formats.tau2 import USER_TOOL_CALLS
from agentguard.trace.formats.toolsandbox import CONTEXT_FILE
from agentguard.trace.model import Call

SUCCESS_SIMILARITY: Final = 1.0
"""Default similarity a run must reach to count as a success (``Y = 1``)."""

SUMMARY_FILE: Final = "result_summary.json"
_RUN_NAME: Final = re.compile(
    r"^agent_(?P<agent>.+)_user_(?P<user>.+)_\d\d_\d\d_\d{4}_\d\d_\d\d_\d\d$"
)

Evaluate = Callable[[Path, str], float]
"""``(execution_context.json, scenario) -> ToolSandbox similarity`` for runs without a summary."""


def is_toolsandbox_path(path: str | Path) -> bool:
    """A ToolSandbox run directory (with ``trajectories/``) or an ``execution_context.json``."""
    p = Path(path)
    return (p.is_dir() and (p / "trajectories").is_dir()) or p.name == CONTEXT_FILE


def iter_toolsandbox(
    path: str | Path, *, evaluate: Evaluate | None = None, threshold: float = SUCCESS_SIMILARITY
) -> Iterator[LoadedEpisode]:
    """Every scenario run under a run directory, or the one run of a context file."""
    p = Path(path)
    files = sorted((p / "trajectories").glob(f"*/{CONTEXT_FILE}")) if p.is_dir() else [p]
    summaries: dict[Path, dict[str, Mapping[str, Any]]] = {}
    for file in files:
        run_dir = file.parent.parent.parent
        try:
            if run_dir not in summaries:
                summaries[run_dir] = _summary(run_dir)
        except TraceRecordError as exc:
            yield LoadedEpisode(str(file), 1, None, None, exc)
            continue
        yield load_context_file(
            file, evaluate=evaluate, threshold=threshold, summary=summaries[run_dir]
        )


def load_context_file(
    file: Path,
    *,
    evaluate: Evaluate | None = None,
    threshold: float = SUCCESS_SIMILARITY,
    summary: Mapping[str, Mapping[str, Any]] | None = None,
) -> LoadedEpisode:
    """One scenario run; ``summary`` is its run's ``result_summary.json`` (read if not given)."""
    source = str(file)
    try:
        rows = _summary(file.parent.parent.parent) if summary is None else summary
        episode = _episode(file, source, rows, evaluate, threshold)
    except TraceRecordError as exc:
        return LoadedEpisode(
            source, 1, None, None, TraceRecordError(exc.message, source=source, record=1)
        )
    return LoadedEpisode(source, 1, episode, None, None)


def _episode(
    file: Path,
    source: str,
    summaries: Mapping[str, Mapping[str, Any]],
    evaluate: Evaluate | None,
    threshold: float,
) -> Episode:
    try:
        value = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TraceRecordError(f"cannot read execution context ({exc})", source=source) from None
    trace, _ = parse(value, source=source, format="toolsandbox", final_answer=False)
    scenario = file.parent.name
    run_dir = file.parent.parent.parent
    summary = summaries.get(scenario)
    labels = {"dataset": "toolsandbox", **_run_labels(run_dir)}
    if summary is not None:
        similarity = summary.get("similarity")
        categories = summary.get("categories")
        if isinstance(categories, list):
            labels["categories"] = "+".join(sorted(map(str, categories)))
    elif evaluate is not None:
        similarity = evaluate(file, scenario)
    else:
        raise TraceRecordError(
            f"no evaluation of scenario {scenario!r}: {run_dir / SUMMARY_FILE} does not list it; "
            "replay with --toolsandbox to have ToolSandbox evaluate its milestones",
            source=source,
        )
    if not isinstance(similarity, (int, float)) or isinstance(similarity, bool):
        raise TraceRecordError(f"scenario {scenario!r}: no numeric similarity", source=source)
    users = set(trace.metrics.get(USER_TOOL_CALLS, ()))
    calls: list[Call] = []
    user_calls: list[tuple[int, Call]] = []
    for call in trace.calls:
        if not call.is_tool:  # dialogue events are not actions
            continue
        if call.position in users:
            user_calls.append((len(calls), call))
        else:
            calls.append(call)
    labels["similarity"] = f"{float(similarity):.4f}"
    success = float(similarity) >= threshold
    return Episode(scenario, tuple(calls), success, labels, None, False, tuple(user_calls))


def _summary(run_dir: Path) -> dict[str, Mapping[str, Any]]:
    """``result_summary.json`` of a run directory by scenario (empty when absent)."""
    file = run_dir / SUMMARY_FILE
    rows: dict[str, Mapping[str, Any]] = {}
    if not file.is_file():
        return rows
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TraceRecordError(f"cannot read ({exc})", source=str(file)) from None
    for row in doc.get("per_scenario_results", []) if isinstance(doc, Mapping) else []:
        if isinstance(row, Mapping) and isinstance(row.get("name"), str):
            rows[row["name"]] = row
    return rows


def _run_labels(run_dir: Path) -> dict[str, str]:
    match = _RUN_NAME.match(run_dir.name)
    labels = {"run": run_dir.name}
    if match:
        labels["model"] = match.group("agent")
        labels["user"] = match.group("user")
    return labels


__all__ = [
    "SUCCESS_SIMILARITY",
    "SUMMARY_FILE",
    "Evaluate",
    "is_toolsandbox_path",
    "iter_toolsandbox",
    "load_context_file",
]
