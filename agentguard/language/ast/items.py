"""AgentLTL spec items: tool declarations and their parameters, constraints, the spec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentguard.language.ast.formulas import Formula
from agentguard.language.ast.terms import Domain, Span, identity_field, literal_identity, span_field
from agentguard.severity import DEFAULT_SEVERITY, Severity

PARAM_TYPES: tuple[str, ...] = ("str", "number", "int", "bool", "list", "dict", "any")
"""The types a tool parameter may have (:attr:`Param.type`)."""

PARAM_TYPE_ALIASES: Mapping[str, str] = {
    "str": "str",
    "string": "str",
    "number": "number",
    "float": "number",
    "int": "int",
    "integer": "int",
    "bool": "bool",
    "boolean": "bool",
    "list": "list",
    "array": "list",
    "dict": "dict",
    "object": "dict",
    "any": "any",
}
"""Every spelling of a parameter type (AgentLTL's, JSON Schema's) -> one of :data:`PARAM_TYPES`."""


@dataclass(frozen=True, slots=True)
class Param:
    """A typed tool parameter: ``name[?]: type [from domain] [op bound]``.

    ``enum`` (the values the argument may take), ``items`` (the element type of a
    ``list``) and ``limits`` (JSON Schema's further bounds, as ``(keyword, value)``
    pairs: a second numeric bound, ``minLength``, ``maxItems``...) have no spec syntax;
    loaders of JSON Schema tool definitions fill them.
    """

    name: str
    type: str = "any"
    optional: bool = False
    source: Domain | None = None
    bound: tuple[str, Any] | None = field(default=None, compare=False)
    span: Span | None = span_field()
    bound_identity: Any = identity_field()
    enum: tuple[Any, ...] | None = field(default=None, compare=False)
    items: str | None = None
    enum_identity: Any = identity_field()
    limits: tuple[tuple[str, Any], ...] = field(default=(), compare=False)
    limits_identity: Any = identity_field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound_identity", literal_identity(self.bound))
        object.__setattr__(self, "enum_identity", literal_identity(self.enum))
        object.__setattr__(self, "limits_identity", literal_identity(self.limits))


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """A ``tool`` declaration: its parameters and its past-time precondition.

    ``allow_extra`` (arguments beyond the declared ones are accepted) has no spec syntax;
    a JSON Schema loader sets it from ``additionalProperties``.
    """

    name: str
    params: tuple[Param, ...] = ()
    requires: Formula | None = None
    span: Span | None = span_field()
    allow_extra: bool = False
    returns: str | None = None  # "yaml" | "json": how a text result is encoded


RESULT_FORMATS = ("yaml", "json")
"""The formats a ``tool ... returns FORMAT`` clause may name."""


@dataclass(frozen=True, slots=True)
class TrustDecl:
    """One item of a ``trusted`` / ``untrusted`` declaration: a tool's result, or the
    part of it at ``path`` (``[*]`` allowed), and its trust class."""

    trusted: bool
    tool: str
    path: tuple[str | int, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Constraint:
    """A weighted, named constraint of a procedure."""

    name: str
    formula: Formula
    layer: str | None = None
    weight: float = 1.0
    severity: Severity = DEFAULT_SEVERITY
    message: str = ""
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Spec:
    """A procedure: constraints with weights, tool declarations, declared externals."""

    name: str | None
    constraints: tuple[Constraint, ...] = ()
    tools: tuple[ToolDecl, ...] = ()
    predicates: tuple[tuple[str, int], ...] = ()  # declared user predicates (name, arity)
    extractors: tuple[str, ...] = ()  # declared user domain extractors
    trust: tuple[TrustDecl, ...] = ()  # trusted / untrusted declarations, in order
    source: str = field(default="<string>", compare=False)
    text: str = field(default="", compare=False, repr=False)

    def constraint(self, name: str) -> Constraint:
        for c in self.constraints:
            if c.name == name:
                return c
        raise KeyError(name)

    def tool(self, name: str) -> ToolDecl | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def total_weight(self) -> float:
        return sum(c.weight for c in self.constraints)
