"""Canonical AgentLTL text for formulas and specs.

The output parses back to an equal tree (property-tested). A spec is printed in its
resolved form: macros expanded and imports inlined, so the text stands alone.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from typing_extensions import assert_never

from agentguard._recursion import allow_deep
from agentguard.language import ast as A
from agentguard.language.walk import children

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
        "returns",
        "trusted",
        "untrusted",
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
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += (
                "[*]" if seg == A.STAR else matches(seg) if A.is_matches(seg) else f".{name(seg)}"
            )
    return out


def matches(step: str) -> str:
    """``[~ /pattern/flags]`` for a :func:`~agentguard.language.ast.matches_step` step."""
    pattern, flags = A.matches_regex(step)
    return "[~ /" + pattern.replace("/", "\\/") + "/" + flags + "]"


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
        if math.isnan(value):
            raise ValueError("NaN has no AgentLTL literal")
        if math.isinf(value):  # the parser reads 1e309 as infinity; repr would say `inf`
            return "1e309" if value > 0 else "-1e309"
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
    if isinstance(t, A.Source):
        return " | ".join(_source_part(p) for p in t.parts)
    raise TypeError(f"not a term: {type(t).__name__}")


def _source_part(p: A.SourcePart) -> str:
    if p.values is not None:
        return term(p.values)
    if p.pattern is None:
        return p.kind
    event: A.Event = p.pattern
    head = "any" if event.tool is None else name(event.tool)
    if event.tests:
        head += "(" + ", ".join(_test(t) for t in event.tests) + ")"
    return f"{p.kind}({head}{path(p.path)})"


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
_LOOSE = (*_BINARY, A.Quantified, A.Compare)
"""Nodes that need parentheses as the operand of a tighter operator."""


def _operand(f: A.Formula, text: str) -> str:
    return f"({text})" if isinstance(f, _LOOSE) else text


def _unary(op: str, f: A.Formula, inner: str) -> str:
    if isinstance(f, _LOOSE):
        return f"{op}({inner})"
    return f"{op} {inner}" if op[-1].isalpha() or op.endswith("]") else f"{op}{inner}"


def _bounded(op: str, bound: int | None) -> str:
    return op if bound is None else f"{op}[<={bound}]"


def formula(f: A.Formula) -> str:
    """Canonical text of a formula.

    Built with an explicit stack, not recursion: the parser accepts formulas nested far
    deeper than Python's frame limit (``!!!…!a`` five thousand deep), and printing one
    must not fail where parsing succeeded.
    """
    texts: list[str] = []
    stack: list[tuple[A.Formula, frozenset[str], bool]] = [(f, frozenset(), False)]
    while stack:
        node, scope, expanded = stack.pop()
        kids = children(node)
        if expanded or not kids:
            parts = texts[len(texts) - len(kids) :] if kids else []
            del texts[len(texts) - len(kids) :]
            texts.append(_render(node, kids, parts, scope))
            continue
        stack.append((node, scope, True))
        inner = scope | {node.var} if isinstance(node, A.Quantified) else scope
        stack.extend((k, inner, False) for k in reversed(kids))
    return texts[0]


def _render(
    f: A.Formula, kids: tuple[A.Formula, ...], parts: list[str], scope: frozenset[str]
) -> str:
    """One node's text from its children's texts; ``scope`` holds the bound variables."""
    if isinstance(f, A.Const):
        return "true" if f.value else "false"
    if isinstance(f, A.Event):
        head = "any" if f.tool is None else name(f.tool)
        if f.tests:
            head += f"({', '.join(_test(t) for t in f.tests)})"
        return head if f.outcome is None else f"{head}.{f.outcome}"
    if isinstance(f, A.Compare):
        return f"{term(f.left)} {f.op} {term(f.right)}"
    if isinstance(f, A.TracePredicate):
        return f"{f.name}({', '.join(_pred_arg(a, scope) for a in f.args)})"
    if isinstance(f, A.UserPredicate):
        return f"{name(f.name)}({', '.join(term(a) for a in f.args)})"
    if isinstance(f, A.Not):
        return _unary("!", kids[0], parts[0])
    if isinstance(f, A.Next):
        return _unary("X" if f.strong else "N", kids[0], parts[0])
    if isinstance(f, A.Yesterday):
        return _unary("Y" if f.strong else "Z", kids[0], parts[0])
    if isinstance(f, A.Eventually):
        return _unary(_bounded("F", f.bound), kids[0], parts[0])
    if isinstance(f, A.Always):
        return _unary(_bounded("G", f.bound), kids[0], parts[0])
    if isinstance(f, A.Once):
        return _unary(_bounded("O", f.bound), kids[0], parts[0])
    if isinstance(f, A.Historically):
        return _unary(_bounded("H", f.bound), kids[0], parts[0])
    if isinstance(f, (A.And, A.Or, A.Implies, A.Iff, A.Until, A.WeakUntil, A.Release, A.Since)):
        op = _BINARY[type(f)]
        return f"{_operand(kids[0], parts[0])} {op} {_operand(kids[1], parts[1])}"
    if isinstance(f, A.Quantified):
        dom = "" if f.domain is None else f" in {domain(f.domain)}"
        return f"{f.kind} {name(f.var)}{dom}: {parts[0]}"
    assert_never(f)


def _test(t: A.Test) -> str:
    if t.field.path and t.field.path[0] == A.PROVENANCE_FIELD:  # a lowered `from` test
        return str(t.field.path[1])
    return f"{term(t.field)} {t.op} {term(t.value)}"


def _pred_arg(a: Any, scope: frozenset[str]) -> str:
    if isinstance(a, str):
        if a in ("=", ">=", "<=", ">", "<"):
            return a
        # a tool whose name a quantifier binds here is written as a string, which the
        # resolver reads as that tool, never as the variable
        return literal(a) if a in scope else name(a)
    if isinstance(a, bool) or a is None:
        return literal(a)
    if isinstance(a, int):
        return str(a)
    if isinstance(a, tuple):
        return "[" + ", ".join(_pred_arg(t, scope) for t in a) + "]"
    return term(a)


def _weight(w: float) -> str:
    """A weight as text that reads back as the same float (``:g`` would round it)."""
    if w.is_integer() and abs(w) < 1e16:
        return str(int(w))
    return literal(w)


def constraint(c: A.Constraint) -> str:
    clauses = []
    if c.layer is not None:
        clauses.append(f"layer {c.layer}")
    clauses.append(f"weight {_weight(c.weight)}")
    clauses.append(f"severity {c.severity}")
    out = f"constraint {name(c.name)}\n    {'  '.join(clauses)}"
    if c.message:
        out += f"\n    message {json.dumps(c.message, ensure_ascii=False)}"
    return out + f"\n  := {formula(c.formula)}"


def tool(t: A.ToolDecl) -> str:
    params = []
    for p in t.params:
        text = f"{name(p.name)}{'?' if p.optional else ''}: {p.type}"
        if p.source is not None:
            text += f" from {domain(p.source)}"
        if p.bound is not None:
            text += f" {p.bound[0]} {literal(p.bound[1])}"
        params.append(text)
    out = f"tool {name(t.name)}({', '.join(params)})"
    if t.returns is not None:
        out += f" returns {t.returns}"
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
    parts.extend(
        f"{'trusted' if d.trusted else 'untrusted'} {name(d.tool)}{path(d.path)}" for d in s.trust
    )
    parts.extend(constraint(c) for c in s.constraints)
    return "\n\n".join(parts) + "\n"


format_formula = formula
format_spec = spec
