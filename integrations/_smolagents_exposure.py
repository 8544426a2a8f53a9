"""A CodeAgent must not be able to import its way to the unguarded tool objects.

The guarded copies hold the originals only in closures, but the originals also live in
the modules that define them; :func:`exposing_imports` names the authorised imports that
would reach them, and :func:`refuse_exposing_imports` refuses, at ``guard()`` time and
before each run, a CodeAgent (managed ones too: any of them may import what defines a
tool of the tree) whose imports would.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
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
        listed = "; ".join(f"{m!r} ({why})" for m, why in sorted(exposing.items()))
        named = getattr(agent, "name", None) or type(agent).__name__
        raise ExposedToolsError(
            f"the CodeAgent {named!r} has additional_authorized_imports "
            f"{sorted(set(authorised))!r}, which let model code reach the original, "
            f"unguarded tool objects through: {listed}. Remove these imports, or move the "
            "tools to a module the agent may not import."
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
        if loaded is None or name in exposing:
            continue
        for value in list(vars(loaded).values()):
            if id(value) in originals or getattr(value, "__name__", None) in homes:
                exposing[name] = "holds a tool or a tool's module"
                break
    return exposing


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
    "tree",
]
