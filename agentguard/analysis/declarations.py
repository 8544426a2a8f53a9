"""Findings against the spec's own ``tool`` declarations, and against an agent's tools.

A test on an argument the tool does not declare (``cancel(reservaton_id = ...)``) or a
literal of a type the parameter can never have (``refund(amount > "500")`` for
``amount: number``) is silently false at run time, so the constraint never fires (or
always does). Both are found here from the syntax tree alone. Tool *results* are not
declared in AgentLTL, so result paths are not checked.

:func:`compare_tools` compares the spec with the tools an agent really has (names and
JSON schemas, as the frameworks expose them); it is a pure function the integrations
call when they know the agent's tools.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Literal

from agentguard.analysis.findings import LintWarning, located
from agentguard.enforcement.schema import fits_type
from agentguard.language import ast as A

IMPLICIT_TOOLS = frozenset({"final_answer"})
"""Tools a spec may name without declaring them (the firewall's final tool)."""
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
MismatchKind = Literal["missing-tool", "unknown-parameter", "undeclared-parameter", "type-mismatch"]

_JSON_TYPES: Mapping[str, frozenset[str]] = {
    "str": frozenset({"string"}),
    "number": frozenset({"number", "integer"}),
    "int": frozenset({"integer"}),
    "bool": frozenset({"boolean"}),
    "list": frozenset({"array"}),
    "dict": frozenset({"object"}),
}


@dataclass(frozen=True, slots=True)
class ToolMismatch:
    """One difference between the spec and the agent's tools.

    ``missing-tool``: the spec names a tool the agent lacks (``suggestion``: its closest
    agent tool); ``unknown-parameter``: a declared parameter the agent's schema lacks;
    ``undeclared-parameter``: a required schema parameter the declaration lacks (every
    call passing it breaks the declaration); ``type-mismatch``: declared vs schema type.
    """

    kind: MismatchKind
    tool: str
    message: str
    parameter: str | None = None
    suggestion: str | None = None

    def __str__(self) -> str:
        return self.message


def spec_tool_names(spec: A.Spec) -> list[str]:
    """Tools the spec declares or names in a formula, in order of appearance."""
    names = [d.name for d in spec.tools]
    for c in spec.constraints:
        for n in walk(c.formula):
            if isinstance(n, A.Event) and n.tool is not None:
                names.append(n.tool)
            elif isinstance(n, A.TracePredicate):
                names.extend(_tool_args(n))
    return list(dict.fromkeys(names))


def _tool_args(p: A.TracePredicate) -> list[str]:
    kinds = A.TRACE_PREDICATES.get(p.name, "").split()
    out: list[str] = []
    for kind, arg in zip(kinds, p.args, strict=False):
        if kind == "t" and isinstance(arg, str):
            out.append(arg)
        elif kind == "[t]" and isinstance(arg, (tuple, list)):
            out.extend(a for a in arg if isinstance(a, str))
    return out


def compare_tools(
    spec: A.Spec,
    agent_tools: Mapping[str, Mapping[str, Any] | None],
    *,
    implicit: frozenset[str] = IMPLICIT_TOOLS,
) -> list[ToolMismatch]:
    """Differences between the spec's tools and the agent's (name -> JSON schema or None).

    A schema is the JSON Schema of the tool's arguments (``{"type": "object",
    "properties": {...}, "required": [...]}``), as smolagents, LangChain, MCP and the
    OpenAI function format give it; None when the framework does not expose one (names
    are then compared, parameters not).
    """
    out: list[ToolMismatch] = []
    for name in spec_tool_names(spec):
        if name in agent_tools or name in implicit:
            continue
        close = difflib.get_close_matches(name, list(agent_tools), n=1, cutoff=0.6)
        have = (
            f"the agent has {close[0]!r}"
            if close
            else (
                "the agent has " + (", ".join(repr(t) for t in sorted(agent_tools)) or "no tools")
            )
        )
        out.append(
            ToolMismatch(
                "missing-tool",
                name,
                f"spec names tool {name!r}, which the agent does not have; {have}",
                suggestion=close[0] if close else None,
            )
        )
    for decl in spec.tools:
        schema = agent_tools.get(decl.name)
        if not isinstance(schema, Mapping):
            continue
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        declared = {p.name for p in decl.params}
        for p in decl.params:
            if p.name not in props:
                close = difflib.get_close_matches(p.name, list(props), n=1, cutoff=0.6)
                hint = f"; the agent's tool has {close[0]!r}" if close else ""
                out.append(
                    ToolMismatch(
                        "unknown-parameter",
                        decl.name,
                        f"{decl.name}: the spec declares parameter {p.name!r}, which the "
                        f"agent's tool does not take{hint}",
                        p.name,
                        close[0] if close else None,
                    )
                )
                continue
            json_types = _schema_types(props[p.name])
            allowed = _JSON_TYPES.get(p.type)
            if allowed is not None and json_types and not (json_types & allowed):
                out.append(
                    ToolMismatch(
                        "type-mismatch",
                        decl.name,
                        f"{decl.name}: parameter {p.name!r} is declared {p.type} but the "
                        f"agent's schema says {'/'.join(sorted(json_types))}",
                        p.name,
                    )
                )
        for r in required:
            if r not in declared:
                out.append(
                    ToolMismatch(
                        "undeclared-parameter",
                        decl.name,
                        f"{decl.name}: the agent's tool requires {r!r}, which the spec's "
                        "declaration lacks, so every call breaks the declaration",
                        r,
                    )
                )
    return out


def _schema_types(prop: Any) -> frozenset[str]:
    """The JSON types a property schema allows (empty: unknown or any)."""
    if not isinstance(prop, Mapping):
        return frozenset()
    t = prop.get("type")
    if isinstance(t, str):
        return frozenset({t}) - {"null"} or frozenset()
    if isinstance(t, list):
        return frozenset(x for x in t if isinstance(x, str) and x != "null")
    for key in ("anyOf", "oneOf"):
        options = prop.get(key)
        if isinstance(options, list):
            found: set[str] = set()
            for o in options:
                sub = _schema_types(o)
                if not sub:
                    if isinstance(o, Mapping) and o.get("type") == "null":
                        continue
                    return frozenset()
                found |= sub
            return frozenset(found)
    return frozenset()
