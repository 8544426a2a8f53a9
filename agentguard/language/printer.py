"""Canonical AgentLTL text for formulas and specs.

The output parses back to an equal tree (property-tested). A spec is printed in its
resolved form: macros expanded and imports inlined, so the text stands alone.
"""

from __future__ import annotations

import json
import re
from functools import singledispatch
from typing import Any

from agentguard._recursion import allow_deep
from agentguard.language import ast as A

KEYWORDS = frozenset(
    [
        "X",
        "N",
        "F",
        "G",
        "U",
        "W",
        "R",
        "S",
        "Y",
        "Z",
        "O",
        "H",
        "true",
        "false",
        "null",
        "forall",
        "exists",
        "in",
        "contains",
        "not",
        "and",
        "or",
        "implies",
        "iff",
        "spec",
        "import",
        "tool",
        "def",
        "constraint",
        "layer",
        "weight",
        "severity",
        "message",
        "requires",
        "from",
        "predicate",
        "extractor",
    ]
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def name(text: str) -> str:
    """An identifier, backtick-quoted when it is not a plain name or is a keyword."""
    if _IDENT.match(text) and text not in KEYWORDS:
        return text
    return f"`{text}`"


def path(segments: tuple[str | int, ...]) -> str:
    out = ""
    for seg in segments:
        out += f"[{seg}]" if isinstance(seg, int) else f".{name(seg)}"
    return out


def literal(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot print {type(value).__name__} as a literal")


def _key(k: str) -> str:
    return k if _IDENT.match(k) and k not in KEYWORDS else json.dumps(k, ensure_ascii=False)


def term(t: A.Term) -> str:
    if isinstance(t, A.Literal):
        return literal(t.value)
    if isinstance(t, A.Var):
        return name(t.name) + path(t.path)
    if isinstance(t, A.FieldRef):
        return name(str(t.path[0])) + path(t.path[1:])
    if isinstance(t, A.MetricRef):
        return "metrics" + path(t.path)
    if isinstance(t, A.Regex):
        return "/" + t.pattern.replace("/", "\\/") + "/" + t.flags
    if isinstance(t, A.ListLiteral):
        return "[" + ", ".join(term(x) for x in t.items) + "]"
    if isinstance(t, A.MapLiteral):
        return "{" + ", ".join(f"{_key(k)}: {term(v)}" for k, v in t.items) + "}"
    if isinstance(t, A.Domain):
        return domain(t)
    raise TypeError(f"not a term: {type(t).__name__}")


def domain(d: A.Domain | A.ListLiteral) -> str:
    if isinstance(d, A.ListLiteral):
        return term(d)
    args: list[str] = []
    if d.tool is not None or d.path:
        args.append(("any" if d.tool is None else name(d.tool)) + path(d.path))
    elif d.extra:
        args.append("any")
    args.extend(literal(x) for x in d.extra)
    if not args:
        return name(d.extractor)
    return f"{name(d.extractor)}({', '.join(args)})"


_BINARY = {
    A.And: "&",
    A.Or: "|",
    A.Implies: "->",
    A.Iff: "<->",
    A.Until: "U",
    A.WeakUntil: "W",
    A.Release: "R",
    A.Since: "S",
}


def _operand(f: A.Formula) -> str:
    text = formula(f)
    if isinstance(f, (*_BINARY, A.Quantified, A.Compare)):
        return f"({text})"
    return text


def _unary(op: str, f: A.Formula) -> str:
    inner = formula(f)
    if isinstance(f, (*_BINARY, A.Quantified, A.Compare)):
        return f"{op}({inner})"
    return f"{op} {inner}" if op[-1].isalpha() or op.endswith("]") else f"{op}{inner}"


@singledispatch
def formula(f: Any) -> str:
    """Canonical text of a formula."""
    raise TypeError(f"not a formula: {type(f).__name__}")


@formula.register
def _(f: A.Const) -> str:
    return "true" if f.value else "false"


@formula.register
def _(f: A.Event) -> str:
    head = "any" if f.tool is None else name(f.tool)
    if not f.tests:
        return head
    tests = ", ".join(f"{term(t.field)} {t.op} {term(t.value)}" for t in f.tests)
    return f"{head}({tests})"


@formula.register
def _(f: A.Compare) -> str:
    return f"{term(f.left)} {f.op} {term(f.right)}"


@formula.register
def _(f: A.Not) -> str:
    return _unary("!", f.operand)


@formula.register(A.And)
@formula.register(A.Or)
@formula.register(A.Implies)
@formula.register(A.Iff)
@formula.register(A.Until)
@formula.register(A.WeakUntil)
@formula.register(A.Release)
@formula.register(A.Since)
def _(f: Any) -> str:
    return f"{_operand(f.left)} {_BINARY[type(f)]} {_operand(f.right)}"


@formula.register
def _(f: A.Next) -> str:
    return _unary("X" if f.strong else "N", f.operand)


@formula.register
def _(f: A.Yesterday) -> str:
    return _unary("Y" if f.strong else "Z", f.operand)


def _bounded(op: str, f: A.Eventually | A.Always | A.Once | A.Historically) -> str:
    return _unary(op if f.bound is None else f"{op}[<={f.bound}]", f.operand)


@formula.register
def _(f: A.Eventually) -> str:
    return _bounded("F", f)


@formula.register
def _(f: A.Always) -> str:
    return _bounded("G", f)


@formula.register
def _(f: A.Once) -> str:
    return _bounded("O", f)


@formula.register
def _(f: A.Historically) -> str:
    return _bounded("H", f)


@formula.register
def _(f: A.Quantified) -> str:
    dom = "" if f.domain is None else f" in {domain(f.domain)}"
    return f"{f.kind} {name(f.var)}{dom}: {formula(f.body)}"


@formula.register
def _(f: A.TracePredicate) -> str:
    return f"{f.name}({', '.join(_pred_arg(a) for a in f.args)})"


def _pred_arg(a: Any) -> str:
    if isinstance(a, str):
        return a if a in ("=", ">=", "<=", ">", "<") else name(a)
    if isinstance(a, bool) or a is None:
        return literal(a)
    if isinstance(a, int):
        return str(a)
    if isinstance(a, tuple):
        return "[" + ", ".join(name(t) for t in a) + "]"
    return term(a)


@formula.register
def _(f: A.UserPredicate) -> str:
    return f"{name(f.name)}({', '.join(term(a) for a in f.args)})"


def constraint(c: A.Constraint) -> str:
    clauses = []
    if c.layer is not None:
        clauses.append(f"layer {c.layer}")
    clauses.append(f"weight {c.weight:g}")
    clauses.append(f"severity {c.severity}")
    out = f"constraint {name(c.name)}\n    {'  '.join(clauses)}"
    if c.message:
        out += f"\n    message {json.dumps(c.message, ensure_ascii=False)}"
    return out + f"\n  := {formula(c.formula)}"


def tool(t: A.ToolDecl) -> str:
    params = []
    for p in t.params:
        text = f"{p.name}{'?' if p.optional else ''}: {p.type}"
        if p.source is not None:
            text += f" from {domain(p.source)}"
        if p.bound is not None:
            text += f" {p.bound[0]} {literal(p.bound[1])}"
        params.append(text)
    out = f"tool {name(t.name)}({', '.join(params)})"
    if t.requires is not None:
        out += f"\n    requires {formula(t.requires)}"
    return out


@allow_deep
def spec(s: A.Spec) -> str:
    """Canonical text of a whole (resolved) spec."""
    parts: list[str] = []
    if s.name:
        parts.append(f"spec {name(s.name)}")
    parts.extend(
        f"predicate {name(n)}({', '.join(f'x{i}' for i in range(arity))})"
        for n, arity in s.predicates
    )
    parts.extend(f"extractor {name(e)}" for e in s.extractors)
    parts.extend(tool(t) for t in s.tools)
    parts.extend(constraint(c) for c in s.constraints)
    return "\n\n".join(parts) + "\n"


format_formula = allow_deep(formula)
format_spec = spec
