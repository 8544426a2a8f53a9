"""What a guarded CodeAgent's model-written code may not touch: the ways from a value it
holds to the frames of the running process (and from there to anything: the guard's
session, the agent, the original tools).

smolagents' local executor forbids dunder attributes, but a traceback reaches the gate's
own frame (a model-defined ``__exit__`` receives it: ``tb.tb_next.tb_frame.f_locals``
held the session, and ``start_run()`` wiped the run), and so does a generator's
``gi_frame.f_back``. :func:`check_code` refuses, before a code action runs, every
attribute or name that leads to frames or looks attributes up by a name computed at run
time; :func:`strict_builtins` replaces the executor's ``getattr`` and ``setattr`` with
ones that refuse the same names (and dunders, which smolagents' ``setattr`` lets
through). A leaf: it knows nothing of the guard.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable, Iterator
from typing import Any, Final

from ._smolagents_tools import smolagents_module

FRAME_ATTRIBUTES: Final = frozenset(
    {
        # a frame, and what hands one out: a generator's, coroutine's, async generator's,
        # a traceback's (reached from any exception through a with-block's __exit__)
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "cr_origin",
        "ag_frame",
        "ag_code",
        "ag_await",
        "tb_frame",
        "tb_next",
        "f_back",
        "f_builtins",
        "f_code",
        "f_globals",
        "f_locals",
        "f_trace",
    }
)
"""Attributes that lead to a frame, and from one to every object of the process."""

DYNAMIC_LOOKUPS: Final = frozenset(
    {
        # attribute lookups by a name computed at run time, past any check of the code
        "attrgetter",  # operator
        "methodcaller",
        "getattr_static",  # inspect
        "get_field",  # string.Formatter
        "vformat",
        # functions that hand out frames
        "currentframe",  # logging, inspect
        "_getframe",  # sys
        "_current_frames",
        "walk_stack",  # traceback
        "walk_tb",
        "get_stack",  # asyncio tasks
        "settrace",  # threading: a trace function is called with frames
        "setprofile",
        "settrace_all_threads",
        "setprofile_all_threads",
    }
)
"""Names of functions that read attributes by computed names or hand out frames."""

DENIED: Final = FRAME_ATTRIBUTES | DYNAMIC_LOOKUPS

FORMAT_METHODS: Final = frozenset({"format", "format_map"})
"""``str.format`` reads attributes named in its format string (``"{0.gi_frame}"``): only a
literal format string, whose fields can be checked, may call it."""


def denied(name: str) -> bool:
    """May model code not read or write an attribute of this name?"""
    return name in DENIED or (name.startswith("__") and name.endswith("__"))


def check_code(code: str) -> list[str]:
    """Raise smolagents' ``InterpreterError`` (the model reads it, as it reads the
    executor's own refusals) if ``code`` reaches for a denied name; code that does not
    parse is left to the executor, which says why. Returns the modules the code imports
    (each dotted prefix: ``import a.b`` imports ``a`` and ``a.b``)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    imported: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported += [prefix for a in node.names for prefix in _prefixes(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported += _prefixes(node.module)
            imported += [f"{node.module}.{a.name}" for a in node.names if a.name != "*"]
        problem = _problem(node)
        if problem is not None:
            line = getattr(node, "lineno", 0)
            raise interpreter_error()(
                f"agentguard refused this code (line {line}): {problem}. Model code may not "
                "reach frames, tracebacks' frames, dunder attributes, or look attributes "
                "up by computed names; the guarded tools are called directly."
            )
    return imported


def _prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[: n + 1]) for n in range(len(parts))]


def _problem(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        if denied(node.attr):
            return f"the attribute {node.attr!r}"
        if node.attr in FORMAT_METHODS:
            return _format_problem(node)
    elif isinstance(node, ast.Name) and node.id in DENIED:
        return f"the name {node.id!r}"
    elif isinstance(node, (ast.ImportFrom, ast.Import)):
        for alias in node.names:
            if alias.name.rpartition(".")[2] in DENIED:
                return f"the import of {alias.name!r}"
    return None


def _format_problem(node: ast.Attribute) -> str | None:
    """``.format`` on a literal string whose fields name no denied attribute is fine;
    on anything else (a variable, ``str.format``, a Formatter) it is refused."""
    literal = node.value
    if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str)):
        return (
            f"'.{node.attr}' on something other than a string literal (its fields could "
            "read any attribute); use an f-string or call it on a literal"
        )
    try:
        fields = list(_format_fields(literal.value))
    except ValueError:
        return None  # a malformed format string fails when it runs, reading nothing
    for field in fields:
        if any(denied(part) for part in _attribute_parts(field)):
            return f"the format field {{{field}}}"
    return None


def _format_fields(text: str, depth: int = 0) -> Iterator[str]:
    """Every replacement field of a format string, the nested ones of a spec too."""
    for _, field, spec, _ in string.Formatter().parse(text):
        if field is not None:
            yield field
        if spec and depth < 2:  # str.format nests specs two levels deep at most
            yield from _format_fields(spec, depth + 1)


def _attribute_parts(field: str) -> list[str]:
    """The attribute names a format field reads (``0.a[k].b`` reads ``a`` and ``b``)."""
    out: list[str] = []
    for segment in field.split(".")[1:]:
        out.append(segment.split("[", 1)[0])
    return out


def strict_builtins(base_getattr: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The executor's ``getattr`` and ``setattr``, refusing denied names (``getattr``
    keeps smolagents' own behaviour otherwise, its ``None`` default included)."""
    refused = interpreter_error()

    def getattr(obj: Any, name: str, default: Any = None) -> Any:
        if isinstance(name, str) and (denied(name) or name in FORMAT_METHODS):
            raise refused(f"Forbidden access to attribute: {name}")
        return base_getattr(obj, name, default)

    def setattr(obj: Any, name: str, value: Any) -> None:
        if isinstance(name, str) and denied(name):
            raise refused(f"Forbidden access to attribute: {name}")
        _SETATTR(obj, name, value)

    return {"getattr": getattr, "setattr": setattr}


_SETATTR: Final = setattr


def interpreter_error() -> type[Exception]:
    """smolagents' ``InterpreterError``: the executor's own refusals are of that type, and
    smolagents shows them to the model as execution errors."""
    smolagents_module()  # a MissingExtraError naming the extra, if smolagents is absent
    from smolagents.local_python_executor import InterpreterError

    error: type[Exception] = InterpreterError
    return error


__all__ = [
    "DENIED",
    "DYNAMIC_LOOKUPS",
    "FORMAT_METHODS",
    "FRAME_ATTRIBUTES",
    "check_code",
    "denied",
    "interpreter_error",
    "strict_builtins",
]
