"""BFCL's own multi-turn result and score files, read as episodes with no conversion step.

BFCL writes, per model and category (``bfcl generate`` / ``bfcl evaluate``)::

    result/<model>/multi_turn/BFCL_v4_multi_turn_<category>_result.json
    score/<model>/multi_turn/BFCL_v4_multi_turn_<category>_score.json

Both are JSON Lines under a ``.json`` name. A result line is
``{"id": "multi_turn_base_0", "result": [turn, ...], ...}`` where each turn is a list
of model steps and a step is either a list of ``{name: json-args}`` calls
(function-calling models) or Python call text ``"[cd(folder='a'), ls()]"``
(prompting models). A score file is a summary line ``{"accuracy", "correct_count",
"total_count"}`` followed by one line per *failed* entry (``{"id", "valid": false,
"error", ...}``): every other entry of the result file succeeded.

Steps BFCL cannot decode (the model chatting instead of calling) are skipped, as
BFCL's evaluator skips them: they never reached the backend. Without a score file,
final success is decided by BFCL's own ``multi_turn_checker`` (offline; it runs the
backends), with BFCL's module-global instance cache cleaned up after each entry.
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agentguard.errors import TraceError, TraceRecordError
from agentguard.pec.bfcl import DATASET, BfclEntry, parse_call
from agentguard.pec.episode import Episode, LoadedEpisode
from agentguard.pec.errors import PecError
from agentguard.trace.jsonl import text_lines
from agentguard.trace.model import Call

RESULT_FILE: Final = re.compile(r"^BFCL_v\d+_(multi_turn_[a-z_]+?)_result\.json$")
SCORE_FILE: Final = re.compile(r"^BFCL_v\d+_(multi_turn_[a-z_]+?)_score\.json$")

Steps = list[list[list[str]]]
"""Per turn, per decoded step, BFCL call strings: what ``multi_turn_checker`` takes."""


@dataclass(frozen=True, slots=True)
class BfclRun:
    """One result line: the episode's calls with turns, and the steps as BFCL decodes them."""

    entry_id: str
    calls: tuple[Call, ...]
    turns: tuple[int, ...]
    steps: Steps
    n_turns: int


def is_result_path(path: str | Path) -> bool:
    """A BFCL multi-turn result file, or a directory holding some (``result/<model>/...``)."""
    p = Path(path)
    if p.is_dir():
        return any(True for _ in _result_files(p))
    return RESULT_FILE.match(p.name) is not None


def _result_files(folder: Path) -> Iterator[Path]:
    return (f for f in sorted(folder.rglob("BFCL_v*_result.json")) if RESULT_FILE.match(f.name))


def result_files(path: str | Path) -> list[Path]:
    """The result files at ``path`` (itself, or every multi-turn one under a directory)."""
    p = Path(path)
    return list(_result_files(p)) if p.is_dir() else [p]


def category_of(path: Path) -> str:
    match = RESULT_FILE.match(path.name) or SCORE_FILE.match(path.name)
    if match is None:
        raise PecError(f"{path}: not a BFCL multi-turn result or score file name")
    return match.group(1)


def model_of(path: Path) -> str:
    """``result/<model>/multi_turn/<file>`` -> ``<model>``; ``-`` outside that layout."""
    parent = path.parent
    return parent.parent.name if parent.name == "multi_turn" and parent.parent.name else "-"


# ------------------------------------------------------------------------- steps
def decode_run(record: Mapping[str, Any], entry: BfclEntry) -> BfclRun:
    """Calls of one result line, in order, each with its turn; undecodable steps skipped."""
    raw = record.get("result")
    if not isinstance(raw, list):
        raise PecError(f"{entry.id}: 'result' is not a list of turns (BFCL: inference error)")
    calls: list[Call] = []
    turns: list[int] = []
    steps: Steps = []
    for turn, turn_steps in enumerate(raw):
        decoded_turn: list[list[str]] = []
        for step in turn_steps if isinstance(turn_steps, list) else [turn_steps]:
            step_calls = _decode_step(step, entry)
            if not step_calls:
                continue
            calls.extend(step_calls)
            turns.extend([turn] * len(step_calls))
            decoded_turn.append([call_text(c) for c in step_calls])
        steps.append(decoded_turn)
    return BfclRun(entry.id, tuple(calls), tuple(turns), steps, len(raw))


def _decode_step(step: Any, entry: BfclEntry) -> list[Call]:
    if isinstance(step, str):
        return _decode_text(step, entry)
    items = [step] if isinstance(step, Mapping) else step
    if not isinstance(items, list):
        return []
    out: list[Call] = []
    for item in items:
        if not isinstance(item, Mapping):
            return []
        for name, args in item.items():
            decoded = _json_args(args)
            if decoded is None:
                return []  # BFCL's decode_execute raises here and the step is skipped
            out.append(Call(str(name), decoded))
    return out


def _json_args(args: Any) -> dict[str, Any] | None:
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    return dict(args) if isinstance(args, Mapping) else None


def _decode_text(text: str, entry: BfclEntry) -> list[Call]:
    body = text.strip("`\n ")
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body += "]"
    try:
        node = ast.parse(body, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.List) or not all(isinstance(e, ast.Call) for e in node.elts):
        return []
    try:
        return [parse_call(ast.unparse(e), entry) for e in node.elts]
    except (PecError, ValueError):
        return []


def call_text(call: Call) -> str:
    """``name(k=repr(v),...)``, exactly as BFCL's ``convert_to_function_call`` writes it."""
    return f"{call.name}({','.join(f'{k}={v!r}' for k, v in call.args.items())})"


# ------------------------------------------------------------------------ success
def read_scores(path: Path) -> tuple[int, frozenset[str]]:
    """A score file's ``total_count`` and the ids of its failed entries."""
    try:
        lines = [json.loads(ln) for _, ln in text_lines(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError) as exc:
        raise TraceError(f"{path}: cannot read BFCL score file ({exc})") from None
    if not lines or not isinstance(lines[0], Mapping) or "total_count" not in lines[0]:
        raise TraceError(f"{path}: a BFCL score file starts with a summary line (total_count)")
    failed = frozenset(
        str(x["id"]) for x in lines[1:] if isinstance(x, Mapping) and x.get("valid") is False
    )
    return int(lines[0]["total_count"]), failed


def find_score_file(scores: Path, model: str, category: str) -> Path | None:
    """BFCL's ``score/<model>/multi_turn/..._<category>_score.json`` under ``scores``."""
    found = [
        f
        for f in sorted(scores.rglob(f"BFCL_v*_{category}_score.json"))
        if SCORE_FILE.match(f.name)
    ]
    of_model = [f for f in found if model_of(f) == model]
    if of_model:
        return of_model[0]
    return found[0] if len(found) == 1 else None


def checker_success(run: BfclRun, entry: BfclEntry) -> bool:
    """BFCL's own verdict: force-terminated runs fail, else ``multi_turn_checker``."""
    if run.n_turns != len(entry.ground_truth):
        return False
    checker = importlib.import_module(
        "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
    ).multi_turn_checker
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    key = f"agentguard_{uuid.uuid4().hex}"
    test_entry = {
        "id": entry.id,
        "initial_config": copy.deepcopy(dict(entry.initial_config)),
        "involved_classes": list(entry.involved_classes),
    }
    try:
        verdict = checker(
            run.steps, [list(t) for t in entry.ground_truth], test_entry, entry.category, key
        )
    finally:
        for name in [n for n in vars(utils) if n.startswith(key)]:
            delattr(utils, name)
    return bool(verdict.get("valid"))


# ------------------------------------------------------------------------ loading
def load_result_files(
    *paths: str | Path,
    entries: Mapping[str, BfclEntry],
    scores: str | Path | None = None,
    method: str | None = None,
) -> list[LoadedEpisode]:
    """Every line of every BFCL result file under ``paths`` as an episode (or its error).

    ``scores`` is BFCL's score directory; without it (or without a score file for a
    category) success comes from BFCL's checker. ``method`` adds a ``method`` label.
    """
    out: list[LoadedEpisode] = []
    for path in paths:
        for file in result_files(path):
            out.extend(_load_file(file, entries, Path(scores) if scores else None, method))
    return out


def _load_file(
    file: Path, entries: Mapping[str, BfclEntry], scores: Path | None, method: str | None
) -> Iterator[LoadedEpisode]:
    source = str(file)
    category, model = category_of(file), model_of(file)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{source}: cannot read BFCL result file ({exc})") from None
    records = list(text_lines(text))
    failed: frozenset[str] | None = None
    score_file = find_score_file(scores, model, category) if scores else None
    if score_file is not None:
        total, failed = read_scores(score_file)
        if total != len(records):
            raise TraceError(
                f"{score_file}: scores {total} entries but {source} has {len(records)}"
            )
    labels = {"dataset": DATASET, "category": category, "model": model}
    if method is not None:
        labels["method"] = method
    for lineno, line in records:
        yield _load_line(line, source, lineno, entries, failed, labels)


def _load_line(
    line: str,
    source: str,
    lineno: int,
    entries: Mapping[str, BfclEntry],
    failed: frozenset[str] | None,
    labels: Mapping[str, str],
) -> LoadedEpisode:
    try:
        record = json.loads(line)
        if not isinstance(record, Mapping) or not isinstance(record.get("id"), str):
            raise PecError("a BFCL result line is an object with a string 'id'")
        entry = entries.get(record["id"])
        if entry is None:
            raise PecError(f"no BFCL multi-turn entry {record['id']!r}")
        run = decode_run(record, entry)
        success = record["id"] not in failed if failed is not None else checker_success(run, entry)
    except (ValueError, PecError) as exc:
        err = TraceRecordError(str(exc), source=source, record=lineno)
        return LoadedEpisode(source, lineno, None, None, err)
    episode = Episode(entry.id, run.calls, success, dict(labels), run.turns)
    return LoadedEpisode(source, lineno, episode, None, None)


def known_broken_failures(task_ids: Sequence[str]) -> list[str]:
    """Those of ``task_ids`` (first failures) that are BFCL's documented broken entries."""
    from agentguard.pec.bfcl import KNOWN_BROKEN

    return [t for t in task_ids if t in KNOWN_BROKEN]


__all__ = [
    "RESULT_FILE",
    "SCORE_FILE",
    "BfclRun",
    "call_text",
    "category_of",
    "checker_success",
    "decode_run",
    "find_score_file",
    "is_result_path",
    "known_broken_failures",
    "load_result_files",
    "model_of",
    "read_scores",
    "result_files",
]
