"""A CodeAgent must not be able to import its way to the unguarded tool objects.

The guarded copies hold the originals only in closures, but the originals also live in
the modules that define them; :func:`refuse_exposing_imports` refuses, at ``guard()``
time, authorised imports that would reach them.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from agentguard.guard import FINAL_TOOL

from ._smolagents_errors import ExposedToolsError

REACHING_MODULES: Final = ("sys", "gc", "importlib", "inspect", "builtins")
"""Modules whose import hands model code any loaded module or object, tools included."""


def refuse_exposing_imports(agent: Any) -> None:
    """Raise :class:`ExposedToolsError` if model code could import its way to a tool.

    The guarded copies hold the originals only in closures, but the originals also live
    in the modules that define them: an authorised import of such a module (or of one
    that reaches every module) would let ``tools_mod.delete_account()`` run unguarded.
    """
    from smolagents.local_python_executor import check_import_authorized

    authorised = list(getattr(agent, "additional_authorized_imports", ()) or ())
    if not authorised:
        return
    originals = {id(t): t for t in _all_tools(agent)}
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
    if exposing:
        listed = "; ".join(f"{m!r} ({why})" for m, why in sorted(exposing.items()))
        raise ExposedToolsError(
            f"this CodeAgent's additional_authorized_imports {authorised!r} let model code "
            f"reach the original, unguarded tool objects through: {listed}. Remove these "
            "imports, or move the tools to a module the agent may not import."
        )


def _all_tools(agent: Any) -> list[Any]:
    tools = [t for n, t in agent.tools.items() if n != FINAL_TOOL]
    for managed in agent.managed_agents.values():
        tools.extend(_all_tools(managed))
    return tools


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


__all__ = ["REACHING_MODULES", "refuse_exposing_imports"]
