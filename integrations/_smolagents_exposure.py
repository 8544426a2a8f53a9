"""A CodeAgent must not be able to import its way to the unguarded tool objects.

The guarded copies hold the originals only in closures, but the originals also live in
the modules that define them; :func:`exposing_imports` names the authorised imports that
would reach them, and :func:`refuse_exposing_imports` refuses, at ``guard()`` time and
before each run, a CodeAgent (managed ones too: any of them may import what defines a
tool of the tree) whose imports would.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any, Final

from agentguard.guard import FINAL_TOOL

from ._smolagents_errors import ExposedToolsError

REACHING_MODULES: Final = (
    # hand model code any loaded module or object
    "sys",
    "gc",
    "importlib",
    "inspect",
    "builtins",
    "pkgutil",
    "pydoc",
    "ctypes",
    # run code built from text or bytes, which imports anything
    "types",
    "marshal",
    "pickle",
    "_pickle",
    "typing",
    "dataclasses",
    "code",
    "codeop",
    "runpy",
    "timeit",
    "trace",
    "profile",
    "cProfile",
    "doctest",
    "pdb",
    "bdb",
    # hand out frames, and through them every object of the process
    "traceback",
    # hold the guarded agents, or let code rewrite the executor's own checks
    "agentguard.integrations",
    "smolagents",
)
"""Modules whose import hands model code any loaded module or object (tools included),
directly, by running code built from text, or through frames."""


def refuse_exposing_imports(agent: Any, tools: Iterable[Any] | None = None) -> None:
    """Raise :class:`ExposedToolsError` if model code of ``agent`` or of any CodeAgent it
    manages could import its way to a tool of the tree (each one's authorised imports
    against every tool of every agent: a managed agent allowed to import the module
    defining the manager's tool reaches it too). ``tools`` are the original tools (by
    default the tree's, as they are before guarding replaces them)."""
    smolagents = _smolagents()
    agents = tree(agent)
    if tools is None:
        tools = [t for a in agents for n, t in a.tools.items() if n != FINAL_TOOL]
    tools = list(tools)
    for each in agents:
        if isinstance(each, smolagents.CodeAgent):
            authorised = list(getattr(each, "additional_authorized_imports", ()) or ())
            executor = getattr(each, "python_executor", None)
            authorised += list(getattr(executor, "authorized_imports", ()) or ())
            refuse(authorised, tools, each)


def refuse(authorised: Sequence[str], tools: Iterable[Any], agent: Any) -> None:
    """Raise :class:`ExposedToolsError` if ``authorised`` reaches one of ``tools``."""
    exposing = exposing_imports(authorised, tools)
    if exposing:
        _raise(sorted(set(authorised)), exposing, agent)


def _raise(authorised: list[str], exposing: dict[str, str], agent: Any) -> None:
    listed = "; ".join(f"{m!r} ({why})" for m, why in sorted(exposing.items()))
    named = getattr(agent, "name", None) or type(agent).__name__
    raise ExposedToolsError(
        f"the CodeAgent {named!r} has additional_authorized_imports {authorised!r}, "
        "which let model code reach the original, unguarded tool objects through: "
        f"{listed}. Remove these imports, or move the tools to a module the agent may "
        "not import."
    )


def exposing_imports(authorised: Sequence[str], tools: Iterable[Any]) -> dict[str, str]:
    """The authorised imports that reach a tool, each with why (empty: none does)."""
    from smolagents.local_python_executor import check_import_authorized

    if not authorised:
        return {}
    authorised = list(authorised)
    originals = {id(t): t for t in tools}
    homes = sorted({m for t in originals.values() for m in _homes(t)})
    exposing: dict[str, str] = {}
    for module in [*REACHING_MODULES, *homes]:
        if check_import_authorized(module, authorised):
            what = "defines a tool" if module in homes else "reaches every loaded module"
            exposing[module] = what
    for name in authorised:  # an authorised module holding a tool, or a tool's module
        loaded = sys.modules.get(name)
        if loaded is not None and name not in exposing and _holds(loaded, originals, homes):
            exposing[name] = "holds a tool or a tool's module"
    return exposing


def refuse_imports(
    modules: Iterable[str], authorised: Sequence[str], tools: Iterable[Any], agent: Any
) -> None:
    """Raise :class:`ExposedToolsError` if one of ``modules`` (those a code action is about
    to import, as far as ``authorised`` lets it) holds a tool. A module not loaded when
    the agent was guarded could not be looked at then: it is imported here, as the
    executor is about to import it anyway."""
    from smolagents.local_python_executor import check_import_authorized

    wanted = [m for m in dict.fromkeys(modules) if check_import_authorized(m, list(authorised))]
    originals = {id(t): t for t in tools}
    homes = sorted({m for t in originals.values() for m in _homes(t)})
    exposing: dict[str, str] = {}
    for name in wanted:
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the executor's own import says why
                continue
        loaded = sys.modules.get(name)
        if name in homes or (loaded is not None and _holds(loaded, originals, homes)):
            exposing[name] = "holds a tool or a tool's module"
    if exposing:
        _raise(sorted(set(authorised)), exposing, agent)


HOLDING_DEPTH: Final = 3
"""How deep inside a module (its registries, classes, objects) a tool is looked for."""
HOLDING_BUDGET: Final = 20_000
"""How many values of a module are looked at, at most."""


def _holds(module: ModuleType, originals: dict[int, Any], homes: list[str]) -> bool:
    """Does ``module`` hold a tool, or a tool's module, where model code reads it: among
    its names, in the dicts, lists, tuples and sets they hold, or as the attribute of a
    class, object or function of its own (``registry["refund"]``, ``Tools.refund``), a
    few levels down? Modules below it are not followed (smolagents refuses those not
    authorised), nor the insides of other modules' classes and objects (a user's tools
    are not kept in numpy's). Answers are kept per module and set of tools."""
    key = (module.__name__, id(module), frozenset(originals))
    found = _HELD.get(key)
    if found is None:
        found = _search(module, originals, homes)
        if len(_HELD) >= HELD_CACHE:
            _HELD.clear()
        _HELD[key] = found
    return found


HELD_CACHE: Final = 1024
"""How many answers of :func:`_holds` are kept (modules do not change their registries
between a guard and its runs; a module changed afterwards is looked at again with the
next tool added)."""

_HELD: dict[tuple[str, int, frozenset[int]], bool] = {}


def _search(module: ModuleType, originals: dict[int, Any], homes: list[str]) -> bool:
    own = module.__name__
    todo: list[tuple[Any, int]] = [(v, HOLDING_DEPTH) for v in list(vars(module).values())]
    seen: set[int] = set()
    budget = HOLDING_BUDGET
    while todo and budget > 0:
        value, depth = todo.pop()
        budget -= 1
        if id(value) in originals:
            return True
        if isinstance(value, ModuleType):
            if value.__name__ in homes:
                return True
            continue
        if depth <= 0 or id(value) in seen:
            continue
        seen.add(id(value))
        todo.extend((item, depth - 1) for item in _inside(value, own))
    return False


def _inside(value: Any, own: str) -> list[Any]:
    """The values model code reads out of ``value`` by subscripts and attributes: a
    container's items; the attributes of a class, object or function of module ``own``."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    where = value if isinstance(value, type) or callable(value) else type(value)
    if getattr(where, "__module__", None) != own:
        return []
    try:
        return list(vars(value).values())
    except TypeError:  # no __dict__ (slots, builtins)
        return []


def tree(agent: Any) -> list[Any]:
    """``agent`` and every agent it manages, at any depth (each once)."""
    out: dict[int, Any] = {}
    todo = [agent]
    while todo:
        each = todo.pop()
        if id(each) not in out:
            out[id(each)] = each
            todo.extend(dict(getattr(each, "managed_agents", {}) or {}).values())
    return list(out.values())


def _smolagents() -> Any:
    import smolagents

    return smolagents


def _homes(tool: Any) -> set[str]:
    """The modules defining ``tool``: its class's and its forward function's."""
    out = {type(tool).__module__}
    forward = getattr(type(tool), "forward", None)
    module = getattr(forward, "__module__", None)
    if isinstance(module, str):
        out.add(module)
    wrapped = getattr(forward, "__wrapped__", None)
    if wrapped is not None and isinstance(getattr(wrapped, "__module__", None), str):
        out.add(wrapped.__module__)
    return {m for m in out if not m.startswith("smolagents")}


__all__ = [
    "REACHING_MODULES",
    "exposing_imports",
    "refuse",
    "refuse_exposing_imports",
    "refuse_imports",
    "tree",
]
