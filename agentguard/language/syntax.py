"""The parsed but unresolved spec: typed nodes the resolver's passes work on.

:mod:`agentguard.language.transformer` builds these from lark's raw tree, so no pass
ever indexes ``children[i]`` of a grammar rule. A name here is still just a name: the
resolver decides whether ``lookup`` is a tool atom, a macro, a predicate or a variable.
Nodes are frozen and slotted, carry the source span of what they were built from, and
have no behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from agentguard.language.ast import Span


# --------------------------------------------------------------- formulas and terms
@dataclass(frozen=True, slots=True)
class Binary:
    """``left op right`` for a binary connective or temporal operator (spelling kept)."""

    op: str
    left: Node
    right: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class Unary:
    """A unary temporal operator: X N F G Y Z O H."""

    op: str
    operand: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class Bounded:
    """``op[<=bound] operand``."""

    op: str
    bound: int
    operand: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class Bool:
    """``true`` / ``false``: a constant formula or a boolean value, by position."""

    value: bool
    span: Span | None


@dataclass(frozen=True, slots=True)
class Quantified:
    quant: str
    var: str
    domain: Node | None
    body: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class Ref:
    """``head.seg[0].seg``: a name with an access path (a tool atom, variable, field...)."""

    head: str
    path: tuple[str | int, ...]
    span: Span | None


@dataclass(frozen=True, slots=True)
class Call:
    """``name(args)``: a tool atom, trace predicate, macro, predicate or extractor."""

    name: str
    args: tuple[Node, ...]
    span: Span | None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """``name(args).word``."""

    call: Call
    word: str
    span: Span | None


@dataclass(frozen=True, slots=True)
class CallPath:
    """``name(args).key[*]...``: a call pattern with a path, as a source's argument."""

    call: Call
    path: tuple[str | int, ...]
    span: Span | None


@dataclass(frozen=True, slots=True)
class Provenance:
    """``ref [not] from source``: where a value of the call came from."""

    left: Ref
    negated: bool
    source: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class SourceUnion:
    """``source | source``: the union of two provenance sources."""

    left: Node
    right: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class Comparison:
    left: Node
    op: str
    right: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class String:
    value: str
    span: Span | None


@dataclass(frozen=True, slots=True)
class Number:
    value: int | float
    span: Span | None


@dataclass(frozen=True, slots=True)
class Null:
    span: Span | None


@dataclass(frozen=True, slots=True)
class RegexLit:
    pattern: str
    flags: str
    span: Span | None


@dataclass(frozen=True, slots=True)
class ListLit:
    items: tuple[Node, ...]
    span: Span | None


@dataclass(frozen=True, slots=True)
class MapLit:
    items: tuple[tuple[str, Node], ...]
    span: Span | None


@dataclass(frozen=True, slots=True)
class OpArg:
    """A bare comparison operator as an argument: ``Count(t, >=, 2)``."""

    op: str
    span: Span | None


Node: TypeAlias = (
    Binary
    | Not
    | Unary
    | Bounded
    | Bool
    | Quantified
    | Ref
    | Call
    | CallOutcome
    | CallPath
    | Provenance
    | SourceUnion
    | Comparison
    | String
    | Number
    | Null
    | RegexLit
    | ListLit
    | MapLit
    | OpArg
)
VALUE_NODES = (String, Number, ListLit, MapLit, RegexLit, Null, OpArg)
"""Nodes that can only be values, never formulas."""

_DESCRIPTIONS: dict[type, str] = {
    String: "a string",
    Number: "a number",
    ListLit: "a list",
    MapLit: "a map",
    RegexLit: "a regex",
    Null: "null",
    OpArg: "an operator",
    Ref: "a name",
    Binary: "binary",
    Not: "not_",
    Unary: "unary_op",
    Bounded: "bounded_op",
    Quantified: "quantified",
    Call: "call",
    CallOutcome: "call_outcome",
    CallPath: "a call pattern with a path",
    Provenance: "a provenance test",
    SourceUnion: "a source union",
    Comparison: "comparison",
}


def describe(node: Node) -> str:
    """How a message names the kind of ``node`` ("a string", "a name", ...)."""
    if isinstance(node, Bool):
        return "true" if node.value else "false"
    return _DESCRIPTIONS[type(node)]


# --------------------------------------------------------------------- declarations
@dataclass(frozen=True, slots=True)
class SpecDecl:
    name: str
    span: Span | None


@dataclass(frozen=True, slots=True)
class ImportDecl:
    path: str
    span: Span | None


@dataclass(frozen=True, slots=True)
class DefDecl:
    name: str
    params: tuple[str, ...]
    body: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class PredicateDecl:
    name: str
    arity: int
    span: Span | None


@dataclass(frozen=True, slots=True)
class ExtractorDecl:
    name: str
    span: Span | None


@dataclass(frozen=True, slots=True)
class ParamFrom:
    """``from operand`` on a tool parameter."""

    operand: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class ParamBound:
    """``op literal`` on a tool parameter."""

    op: str
    value: Node
    span: Span | None


@dataclass(frozen=True, slots=True)
class ParamDecl:
    name: str
    optional: bool
    type_name: str
    type_span: Span | None
    source: ParamFrom | None
    bound: ParamBound | None
    span: Span | None


@dataclass(frozen=True, slots=True)
class ToolDecl:
    name: str
    params: tuple[ParamDecl, ...]
    requires: Node | None
    span: Span | None
    returns: str | None = None
    returns_span: Span | None = None


@dataclass(frozen=True, slots=True)
class TrustDecl:
    """``trusted a, b.path`` / ``untrusted ...``: trust classes of result locations."""

    trusted: bool
    items: tuple[Ref, ...]
    span: Span | None


@dataclass(frozen=True, slots=True)
class Clause:
    """A constraint clause: ``layer NAME``, ``weight N``, ``severity W(n)``, ``message "..."``.

    ``text`` is the clause's word or number as written (a message: its decoded text);
    ``arg`` is a severity's count as written.
    """

    kind: str
    text: str
    arg: str | None
    span: Span | None


@dataclass(frozen=True, slots=True)
class ConstraintDecl:
    name: str
    clauses: tuple[Clause, ...]
    body: Node
    span: Span | None


Decl: TypeAlias = (
    SpecDecl
    | ImportDecl
    | DefDecl
    | PredicateDecl
    | ExtractorDecl
    | ToolDecl
    | ConstraintDecl
    | TrustDecl
)


@dataclass(frozen=True, slots=True)
class SpecFile:
    items: tuple[Decl, ...]
