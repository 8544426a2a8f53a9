"""How a mined constraint names an argument or a result path in AgentLTL text.

An argument named ``result`` or ``args`` is written ``args.result`` / ``args.args``
(docs/language.md: a bare ``result`` is the call's result), every other segment through
the printer's quoting, so any name the traces hold prints as text that parses back.
"""

from __future__ import annotations

from typing import Final

from agentguard.language.printer import name as q
from agentguard.language.printer import path as printed_path

_RESERVED: Final = frozenset({"result", "args"})


def argument(name: str) -> str:
    """The field text of a top-level argument."""
    return f"args.{q(name)}" if name in _RESERVED else q(name)


def field(path: tuple[str, ...]) -> str:
    """``("args", k)`` -> the argument's text; ``("result", ...)`` -> ``result.a.b``."""
    if path[0] == "args":
        return argument(path[1]) + printed_path(path[2:])
    return "result" + printed_path(path[1:])


def variable(avoid: set[str]) -> str:
    """A quantified variable's name that no argument of the atoms it meets is called."""
    for candidate in ("v", "w", "x", "value"):
        if candidate not in avoid:
            return candidate
    i = 0
    while f"v{i}" in avoid:
        i += 1
    return f"v{i}"
