"""Findings against the spec's own ``tool`` declarations, and against an agent's tools.

A test on an argument the tool does not declare (``cancel(reservaton_id = ...)``) or a
literal of a type the parameter can never have (``refund(amount > "500")`` for
``amount: number``) is silently false at run time, so the constraint never fires (or
always does). Both are found here from the syntax tree alone. Tool *results* are not
declared in AgentLTL, so result paths are not checked.

Comparing the spec with the tools an agent really has is
:func:`agentguard.enforcement.agent_tools.compare_tools` (the firewall runs it when it
knows them; re-exported by :mod:`agentguard.analysis`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import Any

from agentguard.analysis.findings import LintWarning, located
from agentguard.language import ast as A
from agentguard.tools.values import fits_type

_ORDER_OPS = frozenset({"<", "<=", ">", ">="})


def walk(node: Any) -> Iterator[Any]:
    """Every syntax node under ``node`` (formulas and terms), depth first."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(reversed(n))
            continue
        if not is_dataclass(n) or isinstance(n, type):
            continue
        yield n
        stack.extend(reversed([getattr(n, f.name) for f in fields(n) if f.name != "span"]))


def _closest(name: str, options: Any) -> str:
    found = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return f"; did you mean {found[0]!r}?" if found else ""


def _uses(f: A.Formula) -> Iterator[tuple[str, A.Test | None, str, Any, A.Span | None]]:
    """(tool, test, argument, literal value or the test's term, span) for every argument use."""
    for n in walk(f):
        if isinstance(n, A.Event) and n.tool is not None:
            for t in n.tests:
                path = t.field.path
                if len(path) > 1 and path[0] == "args":
                    path = path[1:]
                if path and path[0] != "result" and isinstance(path[0], str):
                    yield n.tool, t, path[0], t.value, t.span or n.span
        elif isinstance(n, A.TracePredicate) and n.name in ("CalledWith", "CalledWithResult"):
            tool = n.args[0]
            mapping = next((a for a in n.args[1:] if isinstance(a, A.MapLiteral)), None)
            if isinstance(tool, str) and mapping is not None:
                for key, value in mapping.items:
                    yield tool, None, key, value, getattr(value, "span", None) or n.span


def declaration_findings(spec: A.Spec, source: str | None = None) -> list[LintWarning]:
    """``unknown-argument`` and ``type-mismatch`` warnings, one per offending use."""
    src = source or spec.source
    out: list[LintWarning] = []
    decls = {d.name: d for d in spec.tools}
    formulas: list[tuple[str | None, A.Formula]] = [(c.name, c.formula) for c in spec.constraints]
    formulas += [(None, d.requires) for d in spec.tools if d.requires is not None]
    for owner, formula in formulas:
        for tool, test, arg, value, span in _uses(formula):
            decl = decls.get(tool)
            if decl is None:
                continue
            params = {p.name: p for p in decl.params}
            if arg not in params:
                declared = ", ".join(params) or "no arguments"
                out.append(
                    located(
                        "unknown-argument",
                        owner,
                        f"{tool} has no argument {arg!r} (declared: {declared}), so this "
                        f"test is never true{_closest(arg, params)}",
                        span,
                        src,
                    )
                )
                continue
            problem = _type_problem(params[arg], test.op if test else "=", value)
            if problem:
                out.append(located("type-mismatch", owner, f"{tool}: {problem}", span, src))
    return out


def _type_problem(p: A.Param, op: str, term: Any) -> str:
    """Why a literal can never meet ``op`` against parameter ``p`` ("" when it can)."""
    if p.type == "any" or not isinstance(term, (A.Literal, A.Regex, A.ListLiteral)):
        return ""
    want = f"{p.name}: {p.type}"
    if isinstance(term, A.Regex):
        if op in ("~", "!~") and p.type != "str":
            return f"a regular expression matches text only, but {want}"
        return ""
    if isinstance(term, A.ListLiteral):
        values = [x.value for x in term.items if isinstance(x, A.Literal)]
        complete = bool(values) and len(values) == len(term.items)
        if op == "in" and complete and not any(fits_type(v, p.type) or v is None for v in values):
            return f"no value in {_show(values)} has the declared type ({want})"
        return ""
    value = term.value
    if value is None:
        return ""
    if op in ("=", "!="):
        if not fits_type(value, p.type) and not (p.type == "int" and _integral(value)):
            verdict = "is never equal to" if op == "=" else "always differs from"
            return f"{_show(value)} ({_kind(value)}) {verdict} a value of {want}"
        return ""
    if op in _ORDER_OPS:
        numeric = p.type in ("number", "int")
        if numeric and not fits_type(value, "number"):
            return (
                f"{p.name} {op} {_show(value)} compares a {_kind(value)} with {want}: always false"
            )
        if p.type == "str" and not isinstance(value, str):
            return (
                f"{p.name} {op} {_show(value)} compares a {_kind(value)} with {want}: always false"
            )
        if p.type in ("bool", "list", "dict"):
            return f"{p.name} {op} {_show(value)}: values of {want} are not ordered: always false"
        return ""
    if op in ("~", "!~") and p.type != "str":
        return f"a pattern matches text only, but {want}"
    if op == "contains" and p.type not in ("list", "str", "dict"):
        return f"'contains' needs a list, text or object, but {want}"
    return ""


def _integral(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


def _kind(value: Any) -> str:
    for name, label in (
        ("bool", "boolean"),
        ("int", "number"),
        ("number", "number"),
        ("str", "string"),
        ("list", "list"),
        ("dict", "object"),
    ):
        if fits_type(value, name):
            return label
    return type(value).__name__


def _show(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


# ------------------------------------------------------------------ agent tools
