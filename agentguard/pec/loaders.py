"""Read episodes from JSON Lines, keeping the good records and naming the bad ones.

One record per line::

    {"task_id": "t7", "labels": {"dataset": "bfcl", "model": "gpt-4.1", "method": "react"},
     "success": true,
     "calls": [{"tool_name": "cd", "arguments": {"folder": "docs"}, "tool_result": "...",
                "executable": true}, ...],
     "fed": 3, "failure": "dependency"}

``user_calls`` (optional) are calls made by a simulated user, each a call record with
``before`` = how many agent calls preceded it (replayed, never judged; see
:class:`~agentguard.pec.episode.Episode`). ``calls`` may also be given as an agentguard run trace (``tool_calls`` of a metrics
record, or ``trace``). Executability is optional: ``fed``, or a per-call
``executable`` flag, makes the record :class:`Scored` right away; otherwise an
oracle has to replay it. ``dataset``/``model``/``method`` at top level are labels too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentguard.errors import TraceError, TraceRecordError
from agentguard.pec.agentdojo_files import agentdojo_episode
from agentguard.pec.episode import Episode, LoadedEpisode, Scored
from agentguard.pec.labels import Failure, FailureLabel
from agentguard.pec.toolsandbox_files import is_toolsandbox_path, iter_toolsandbox
from agentguard.trace.formats import agentdojo as agentdojo_format
from agentguard.trace.jsonl import text_lines
from agentguard.trace.loaders import trace_from_json
from agentguard.trace.model import Call

_TASK_KEYS = ("task_id", "id", "task")
_SUCCESS_KEYS = ("success", "final_success", "Y", "y", "reward")
_CALL_KEYS = ("calls", "tool_calls", "trace")
_LABEL_KEYS = ("dataset", "model", "method", "category")
_FAILURE_KEYS = ("failure", "first_failure", "label")


def episode_from_json(value: Any, *, source: str = "<json>") -> tuple[Episode, Scored | None]:
    """Build an episode (and its recorded verdict, if the record carries one)."""
    if not isinstance(value, Mapping):
        raise TraceRecordError(
            f"an episode must be a JSON object, got {type(value).__name__}", source=source
        )
    task_id = _first(value, _TASK_KEYS)
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool) or task_id == "":
        raise TraceRecordError("episode has no 'task_id' (string or integer)", source=source)
    success = _success(value, source)
    labels = _labels(value, source)
    raw_calls = _first(value, _CALL_KEYS)
    if raw_calls is None:
        raw_calls = []
    calls = _calls(raw_calls, source)
    turns = _turns(value, raw_calls, len(calls), source)
    no_tool_allowed = value.get("no_tool_allowed", False)
    if not isinstance(no_tool_allowed, bool):
        raise TraceRecordError("'no_tool_allowed' must be true or false", source=source)
    user_calls = _user_calls(value.get("user_calls", []), len(calls), source)
    episode = Episode(str(task_id), calls, success, labels, turns, no_tool_allowed, user_calls)
    return episode, _recorded_verdict(value, raw_calls, episode, source)


def _user_calls(raw: Any, n_calls: int, source: str) -> tuple[tuple[int, Call], ...]:
    """``user_calls``: call records with ``before`` = how many agent calls preceded each."""
    if not isinstance(raw, list) or not all(isinstance(r, Mapping) for r in raw):
        raise TraceRecordError("'user_calls' must be a list of call records", source=source)
    out = []
    for record in raw:
        before = record.get("before")
        if not isinstance(before, int) or isinstance(before, bool) or not 0 <= before <= n_calls:
            raise TraceRecordError(
                f"a user call needs 'before' in 0..{n_calls} (agent calls before it)", source=source
            )
        (call,) = _calls([{k: v for k, v in record.items() if k != "before"}], source)
        out.append((before, call))
    return tuple(out)


def _first(value: Mapping[str, Any], keys: Sequence[str]) -> Any:
    return next((value[k] for k in keys if k in value), None)


def _success(value: Mapping[str, Any], source: str) -> bool:
    raw = _first(value, _SUCCESS_KEYS)
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return bool(raw)
    raise TraceRecordError(
        "episode has no final success 'success' (true/false or 0/1)", source=source
    )


def _labels(value: Mapping[str, Any], source: str) -> dict[str, str]:
    raw = value.get("labels", {})
    if not isinstance(raw, Mapping):
        raise TraceRecordError("'labels' must be an object of strings", source=source)
    labels = {k: str(value[k]) for k in _LABEL_KEYS if k in value}
    for key, item in raw.items():
        if not isinstance(item, (str, int, float)) or isinstance(item, bool):
            raise TraceRecordError(f"label {key!r} must be a string or number", source=source)
        labels[str(key)] = str(item)
    return labels


def _calls(raw: Any, source: str) -> tuple[Call, ...]:
    if isinstance(raw, Mapping) and "tool_calls" not in raw:
        raise TraceRecordError("'calls' must be a list of tool calls", source=source)
    try:
        # episodes list predicted calls only: a closing text answer is not a call here
        # ... and a message is no call either (dialogue events are not actions)
        return trace_from_json(raw, source=source, final_answer=False, messages=False).calls
    except TraceRecordError as exc:
        raise TraceRecordError(exc.message, source=source) from None


def _turns(
    value: Mapping[str, Any], raw_calls: Any, n_calls: int, source: str
) -> tuple[int, ...] | None:
    if "turns" in value:
        turns = value["turns"]
    elif (
        isinstance(raw_calls, list)
        and raw_calls
        and all(isinstance(c, Mapping) and "turn" in c for c in raw_calls)
    ):
        turns = [c["turn"] for c in raw_calls]
    else:
        return None
    if not isinstance(turns, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in turns
    ):
        raise TraceRecordError("'turns' must be a list of non-negative integers", source=source)
    if len(turns) != n_calls:
        raise TraceRecordError(f"{len(turns)} turn indices for {n_calls} calls", source=source)
    return tuple(turns)


def _recorded_verdict(
    value: Mapping[str, Any], raw_calls: Any, episode: Episode, source: str
) -> Scored | None:
    label = _failure_label(_first(value, _FAILURE_KEYS), source)
    fed = value.get("fed")
    flags: list[Any] = []
    if isinstance(raw_calls, list):
        flags = [c.get("executable") for c in raw_calls if isinstance(c, Mapping)]
    if fed is None and flags and all(isinstance(f, bool) for f in flags):
        first_bad = next((i for i, ok in enumerate(flags) if not ok), None)
        fed = episode.horizon + 1 if first_bad is None else first_bad + 1
        if first_bad is not None and label is None:
            call = raw_calls[first_bad]
            label = _failure_label(_first(call, _FAILURE_KEYS), source)
    elif fed is None and episode.is_no_tool:
        fed = 2 if episode.no_tool_allowed else 1
        if fed == 1 and label is None:
            label = FailureLabel.PRECONDITION
    if fed is None:
        return None
    if not isinstance(fed, int) or isinstance(fed, bool):
        raise TraceRecordError("'fed' must be an integer", source=source)
    if not 1 <= fed <= episode.horizon + 1:
        raise TraceRecordError(
            f"'fed' = {fed} is outside 1..T+1 = 1..{episode.horizon + 1}", source=source
        )
    failed = fed <= episode.horizon
    if not failed and label is not None:
        raise TraceRecordError(
            f"fully executable (fed = T+1) but labelled {label.value!r}", source=source
        )
    failure = Failure(label, "recorded") if failed and label is not None else None
    return Scored(episode, fed, failure)


def _failure_label(raw: Any, source: str) -> FailureLabel | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise TraceRecordError("a failure label must be a string", source=source)
    try:
        return FailureLabel.parse(raw)
    except ValueError as exc:
        raise TraceRecordError(str(exc), source=source) from None


def iter_episode_file(path: str | Path) -> Iterator[LoadedEpisode]:
    """Yield every record of a JSON Lines episode file, good or bad, with 1-based line numbers.

    A ``.json`` file may hold one list of episode objects (numbered from 1), or be a
    tau-bench or tau2 results file (one episode per run, see :mod:`.tau_files`), or one
    AgentDojo run file (one episode, see :mod:`.agentdojo_files`). A ToolSandbox run
    directory or ``execution_context.json`` gives one episode per scenario run (see
    :mod:`.toolsandbox_files`).
    """
    p = Path(path)
    source = str(p)
    if is_toolsandbox_path(p):
        yield from iter_toolsandbox(p)
        return
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{source}: cannot read episode file ({exc.strerror or exc})") from None
    if p.suffix == ".json":
        yield from _iter_json_list(text, source)
        return
    for lineno, line in text_lines(text):
        yield _load_line(line, source, lineno)


def _iter_json_list(text: str, source: str) -> Iterator[LoadedEpisode]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        yield LoadedEpisode(
            source, 1, None, None, TraceRecordError(f"invalid JSON: {exc}", source=source, record=1)
        )
        return
    from agentguard.pec.tau_files import iter_tau_episodes, tau_items

    tau = tau_items(value)
    if tau is not None:
        yield from iter_tau_episodes(*tau, source)
        return
    if agentdojo_format.detect(value):  # one AgentDojo run file: one episode
        yield _agentdojo(value, source)
        return
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items, start=1):
        yield _load_value(item, source, index)


def _agentdojo(value: Any, source: str) -> LoadedEpisode:
    try:
        episode = agentdojo_episode(value, source)
    except TraceRecordError as exc:
        return LoadedEpisode(
            source, 1, None, None, TraceRecordError(exc.message, source=source, record=1)
        )
    return LoadedEpisode(source, 1, episode, None, None)


def _load_line(line: str, source: str, lineno: int) -> LoadedEpisode:
    try:
        value = json.loads(line)
    except ValueError as exc:
        err = TraceRecordError(f"invalid JSON: {exc}", source=source, record=lineno)
        return LoadedEpisode(source, lineno, None, None, err)
    return _load_value(value, source, lineno)


def _load_value(value: Any, source: str, record: int) -> LoadedEpisode:
    try:
        episode, scored = episode_from_json(value, source=source)
    except TraceRecordError as exc:
        err = TraceRecordError(exc.message, source=source, record=record)
        return LoadedEpisode(source, record, None, None, err)
    return LoadedEpisode(source, record, episode, scored, None)


def load_episodes(*paths: str | Path) -> list[LoadedEpisode]:
    """All records of all files (see :func:`iter_episode_file`)."""
    out: list[LoadedEpisode] = []
    for path in paths:
        out.extend(iter_episode_file(path))
    return out


def episode_to_json(scored: Scored | Episode) -> dict[str, Any]:
    """The JSON Lines record :func:`episode_from_json` reads back (round trip)."""
    episode = scored.episode if isinstance(scored, Scored) else scored
    out: dict[str, Any] = {
        "task_id": episode.task_id,
        "labels": dict(episode.labels),
        "success": episode.success,
        "calls": [c.to_record() for c in episode.calls],
    }
    if episode.turns is not None:
        out["turns"] = list(episode.turns)
    if episode.no_tool_allowed:
        out["no_tool_allowed"] = True
    if episode.user_calls:
        out["user_calls"] = [{"before": b, **c.to_record()} for b, c in episode.user_calls]
    if isinstance(scored, Scored):
        out["fed"] = scored.fed
        if scored.failure is not None:
            out["failure"] = scored.failure.label.value
    return out


__all__ = [
    "LoadedEpisode",
    "episode_from_json",
    "episode_to_json",
    "iter_episode_file",
    "load_episodes",
]
