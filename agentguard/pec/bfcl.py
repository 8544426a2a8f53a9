"""BFCL-v3 multi-turn adapter: tasks, tool schemas, held-out tools and executable backends.

Uses the data files and backends shipped in the PyPI package ``bfcl-eval`` (extra
``[bfcl]``; a lean ``pip install --no-deps bfcl-eval mpmath`` works). The BFCL
files are named ``BFCL_v4_*`` in current releases; the multi-turn categories are
the v3 ones.

Two deliberate differences from BFCL's own ``execute_multi_turn_func_call``:

* calls are dispatched to fresh backend instances owned by :class:`BfclEnvironment`
  (``reset`` builds them, ``close`` drops them), not looked up by ``eval`` of a
  string in BFCL's module-global cache keyed by model name and entry id, so
  replays never share state and nothing leaks between them;
* the schema stage runs first (see :func:`tool_schemas`, :func:`offered_tools`):
  the backends do not catch a tool named like a Python builtin, a held-out
  ``miss_func`` tool used before its turn, or wrong argument types.

A backend signals failure three ways, all treated as a rejected transition
(state-consistency): a raised exception (BFCL's ``"Error during execution: ..."``),
an error in the result (an ``"error"`` key, or ``['Error: ...']`` inside a list), and
soft failures such as ``{"authentication_status": false}``. Which returned results
count is an :data:`~agentguard.pec.environment.ErrorRule` (``error_rule=``); the
default does not count a read-only query's ``false`` (``ticket_get_login_status ->
{"login_status": false}`` is an answer, not a refusal).
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agentguard.errors import MissingExtraError
from agentguard.language.ast import ToolDecl
from agentguard.pec.declarations import declarations_from_json_schema
from agentguard.pec.environment import ErrorRule, Execution, default_error_rule
from agentguard.pec.episode import Episode
from agentguard.pec.errors import PecError, ReplayError
from agentguard.pec.oracle import CallContext, Oracle
from agentguard.trace.model import Call

CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
DATASET = "bfcl-v3"

_SCENARIO_BROKEN = {
    153: "verify_traveler_information with passport 'P12345678': the backend only verifies "
    "passports starting with 'US' ({'verification_status': False}), yet the next turn "
    "assumes the details were verified",
    154: "verify_traveler_information with passport 'P87654321' fails the backend's 'US' "
    "prefix rule ({'verification_status': False})",
    173: "close_ticket(ticket_id='ticket_001'): the function is declared with an integer "
    "ticket_id, but the scenario's ticket ids are strings",
    181: "verify_traveler_information with passport '123456' fails the backend's 'US' "
    "prefix rule ({'verification_status': False})",
    188: "authenticate_twitter(password='michael_cant_smith_smith') while the scenario's "
    "password is 'michael1234' ({'authentication_status': False})",
}
KNOWN_BROKEN: dict[str, str] = {
    f"{category}_{index}": reason
    for category in CATEGORIES
    for index, reason in _SCENARIO_BROKEN.items()
}
KNOWN_BROKEN["multi_turn_miss_func_49"] = (
    "tail(file_name='file3.txt') in turn 1, but tail is held out until turn 3"
)
"""Ground-truth entries that are not executable, and why (bfcl-eval 2026.3.23)."""


def _bfcl() -> Any:
    try:
        import bfcl_eval
    except ImportError:
        raise MissingExtraError("bfcl", "bfcl-eval") from None
    return bfcl_eval


def data_dir() -> Path:
    return Path(_bfcl().__file__).parent / "data"


@dataclass(frozen=True, slots=True)
class BfclEntry:
    """One multi-turn task with its ground-truth calls (one list of call strings per turn)."""

    id: str
    category: str
    initial_config: Mapping[str, Any]
    involved_classes: tuple[str, ...]
    missed_function: Mapping[int, tuple[str, ...]]
    ground_truth: tuple[tuple[str, ...], ...]

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category


def _data_file(folder: Path, category: str) -> Path:
    matches = sorted(folder.glob(f"BFCL_v*_{category}.json"))
    if not matches:
        raise ReplayError(f"no BFCL data file for {category!r} under {folder}")
    return matches[-1]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@cache
def load_entries(category: str) -> tuple[BfclEntry, ...]:
    """All entries of one multi-turn category, with their ground truth."""
    if category not in CATEGORIES:
        raise PecError(f"unknown BFCL multi-turn category {category!r}; one of {CATEGORIES}")
    folder = data_dir()
    answers = {
        a["id"]: a["ground_truth"]
        for a in _read_jsonl(_data_file(folder / "possible_answer", category))
    }
    out = []
    for raw in _read_jsonl(_data_file(folder, category)):
        missed = {int(turn): tuple(names) for turn, names in raw.get("missed_function", {}).items()}
        out.append(
            BfclEntry(
                id=raw["id"],
                category=category,
                initial_config=raw.get("initial_config", {}),
                involved_classes=tuple(raw["involved_classes"]),
                missed_function=missed,
                ground_truth=tuple(tuple(turn) for turn in answers[raw["id"]]),
            )
        )
    return tuple(out)


def load_all(categories: Iterable[str] = CATEGORIES) -> dict[str, BfclEntry]:
    """Entries of several categories by id."""
    return {e.id: e for category in categories for e in load_entries(category)}


# ------------------------------------------------------------------------ backends
def _backend_class(class_name: str) -> type[Any]:
    config = importlib.import_module("bfcl_eval.constants.executable_backend_config")
    module = importlib.import_module(config.CLASS_FILE_PATH_MAPPING[class_name])
    cls: type[Any] = getattr(module, class_name)
    return cls


@cache
def _class_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    config = importlib.import_module("bfcl_eval.constants.executable_backend_config")
    path = data_dir() / "multi_turn_func_doc" / config.MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    return tuple(_read_jsonl(path))


def tool_schemas(entry: BfclEntry) -> dict[str, ToolDecl]:
    """Declarations of every function of the entry's classes (held-out ones included)."""
    docs = [doc for name in entry.involved_classes for doc in _class_docs(name)]
    return declarations_from_json_schema(docs)


def held_out(entry: BfclEntry) -> dict[str, int]:
    """``{tool: first turn it is offered}`` for the ``miss_func`` held-out functions."""
    return {tool: turn for turn, tools in entry.missed_function.items() for tool in tools}


def offered_tools(entries: Mapping[str, BfclEntry]) -> Callable[[CallContext], Collection[str]]:
    """The tools offered at a call: all of the entry's functions, minus those still held out."""

    def offered(ctx: CallContext) -> Collection[str]:
        entry = _entry(entries, ctx.episode.task_id)
        later = {tool for tool, turn in held_out(entry).items() if ctx.turn < turn}
        return set(tool_schemas(entry)) - later

    return offered


def _entry(entries: Mapping[str, BfclEntry], task_id: str) -> BfclEntry:
    try:
        return entries[task_id]
    except KeyError:
        raise ReplayError(f"no BFCL entry {task_id!r} loaded") from None


# ------------------------------------------------------------------- call parsing
def parse_call(text: str, entry: BfclEntry) -> Call:
    """``"mv(source='a', destination='b')"`` -> Call; positional arguments get their names."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise PecError(f"{entry.id}: cannot parse call {text!r} ({exc.msg})") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise PecError(f"{entry.id}: {text!r} is not a plain function call")
    name = node.func.id
    args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    if node.args:
        params = _positional_names(entry, name)
        if len(node.args) > len(params):
            raise PecError(f"{entry.id}: too many positional arguments in {text!r}")
        for pname, value in zip(params, node.args, strict=False):
            args[pname] = ast.literal_eval(value)
    return Call(name, args)


def _positional_names(entry: BfclEntry, tool: str) -> list[str]:
    for class_name in entry.involved_classes:
        method = getattr(_backend_class(class_name), tool, None)
        if callable(method):
            return [p for p in inspect.signature(method).parameters if p != "self"]
    schema = tool_schemas(entry).get(tool)
    return [p.name for p in schema.params] if schema else []


def ground_truth_episode(entry: BfclEntry) -> Episode:
    """The entry's ground-truth calls as one episode (turn of each call recorded)."""
    calls: list[Call] = []
    turns: list[int] = []
    for turn, texts in enumerate(entry.ground_truth):
        for text in texts:
            calls.append(parse_call(text, entry))
            turns.append(turn)
    labels = {"dataset": DATASET, "category": entry.category, "method": "ground-truth"}
    return Episode(entry.id, tuple(calls), True, labels, tuple(turns))


# ---------------------------------------------------------------------- environment
class BfclEnvironment:
    """Executes calls on fresh BFCL backend instances, one set per replay."""

    def __init__(
        self, entries: Mapping[str, BfclEntry], error_rule: ErrorRule = default_error_rule
    ) -> None:
        _bfcl()
        self.entries = entries
        self.error_rule = error_rule
        self._instances: dict[str, Any] = {}
        self._methods: dict[str, Callable[..., Any]] = {}

    def reset(self, task_id: str) -> None:
        entry = _entry(self.entries, task_id)
        stateless = importlib.import_module(
            "bfcl_eval.constants.executable_backend_config"
        ).STATELESS_CLASSES
        self.close()
        for class_name in entry.involved_classes:
            instance = _backend_class(class_name)()
            if class_name not in stateless:
                config = copy.deepcopy(dict(entry.initial_config).get(class_name, {}))
                instance._load_scenario(config, long_context=entry.long_context)
            self._instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self._methods[name] = method

    def execute(self, call: Call) -> Execution:
        method = self._methods.get(call.name)
        if method is None:
            return False, f"Error during execution: no backend function {call.name!r}"
        try:
            result = method(**dict(call.args))
        except Exception as exc:  # noqa: BLE001 - BFCL's own protocol: a raise is a rejected call
            return False, f"Error during execution: {exc}"
        return not self.error_rule(call, result), result

    def close(self) -> None:
        self._instances.clear()
        self._methods.clear()


def bfcl_oracle(
    entries: Mapping[str, BfclEntry], *, error_rule: ErrorRule = default_error_rule
) -> Oracle:
    """Schema (per-entry tools, held-out ones withheld) then backend replay.

    ``error_rule`` decides which returned results are refusals (exceptions always are);
    see :data:`agentguard.pec.environment.ERROR_RULES`.

    BFCL has no declared ``from results`` sources or ``requires`` formulas, so the
    dependency and precondition stages pass; the backend decides state-consistency.
    The information stage is off: the backend's error signals are already rejections.
    """
    offered = offered_tools(entries)
    union: dict[str, ToolDecl] = {}
    for entry in entries.values():
        union.update(tool_schemas(entry))
    return Oracle.build(
        tools=union,
        offered=offered,
        environment=BfclEnvironment(entries, error_rule),
        is_error=None,
    )


__all__ = [
    "CATEGORIES",
    "DATASET",
    "KNOWN_BROKEN",
    "BfclEntry",
    "BfclEnvironment",
    "bfcl_oracle",
    "data_dir",
    "ground_truth_episode",
    "held_out",
    "load_all",
    "load_entries",
    "offered_tools",
    "parse_call",
    "tool_schemas",
]
