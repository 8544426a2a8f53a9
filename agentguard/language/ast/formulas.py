"""AgentLTL formulas: atoms, connectives, future and past operators, quantifiers.

What evaluation, monitoring and printing work on. Every name here is resolved: a tool
atom is an :class:`Event`, a trace predicate a :class:`TracePredicate`, a user predicate
a :class:`UserPredicate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from agentguard.language.ast.terms import Domain, FieldRef, ListLiteral, Span, Term, span_field


@dataclass(frozen=True, slots=True)
class Const:
    value: bool
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Test:
    """``field op value`` inside an event atom; ``field`` is a FieldRef."""

    field: FieldRef
    op: str
    value: Term
    span: Span | None = span_field()


OUTCOMES = ("ok", "error")
"""The outcome tests on an atom: ``tool.ok`` (it ran without error), ``tool.error``."""


@dataclass(frozen=True, slots=True)
class Event:
    """The call at this position is ``tool`` (``None``: any tool) and passes every test.

    ``outcome`` (``"ok"`` / ``"error"``, from ``tool.ok`` / ``tool(...).error``) also asks
    how the call ended: without error, or with one (``Call.error``).
    """

    tool: str | None
    tests: tuple[Test, ...] = ()
    outcome: str | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Compare:
    """``left op right`` between terms (variables, metrics, literals, domains)."""

    left: Term
    op: str
    right: Term
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Not:
    operand: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class And:
    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Or:
    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Implies:
    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Iff:
    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Next:
    """``X φ`` (strong: false at the last position) or ``N φ`` (weak: true there)."""

    operand: Formula
    strong: bool = True
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Eventually:
    """``F φ``; with ``bound`` k, ``F[<=k] φ``: within positions i..i+k."""

    operand: Formula
    bound: int | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Always:
    """``G φ``; with ``bound`` k, ``G[<=k] φ``: at positions i..min(i+k, n-1)."""

    operand: Formula
    bound: int | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Until:
    """``φ U ψ`` (strong)."""

    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class WeakUntil:
    """``φ W ψ``."""

    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Release:
    """``φ R ψ``."""

    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Yesterday:
    """``Y φ`` (strong: false at position 0) or ``Z φ`` (weak: true at position 0)."""

    operand: Formula
    strong: bool = True
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Once:
    """``O φ``; with ``bound`` k, ``O[<=k] φ``: at one of positions max(0, i-k)..i."""

    operand: Formula
    bound: int | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Historically:
    """``H φ``; with ``bound`` k, ``H[<=k] φ``."""

    operand: Formula
    bound: int | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Since:
    """``φ S ψ``: ψ held at some j <= i and φ at every position in (j, i]."""

    left: Formula
    right: Formula
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Quantified:
    """``forall``/``exists`` ``var`` [``in`` domain] ``: body``.

    ``domain`` None is the parametric form: the variable ranges over the values the
    trace holds at the fields the body tests it against (the active domain).
    """

    kind: str  # "forall" | "exists"
    var: str
    domain: Domain | ListLiteral | None
    body: Formula
    span: Span | None = span_field()


TRACE_PREDICATES: Mapping[str, str] = {
    "Called": "t",
    "CalledN": "t n op",
    "Before": "t t",
    "After": "t t",
    "AllBefore": "[t] t",
    "InstanceBefore": "t n t n",
    "InOrder": "[t]",
    "WithinSteps": "t t n",
    "CalledWith": "t {}",
    "CalledWithResult": "t v {}",
    "BranchCalled": "t t",
    "Predicate": "f",
}
"""The Appendix A.2.2 predicates and their argument kinds (t tool, n int, op comparison,
[t] tool list, {} argument map, v value, f registered function name)."""


@dataclass(frozen=True, slots=True)
class TracePredicate:
    """One of the paper's global trace predicates (evaluated over the whole trace).

    ``args`` hold plain values: tool names (str, or a :class:`Var` a quantifier binds),
    ints, comparison strings, tuples of tool names, a MapLiteral, a result Term.
    """

    name: str
    args: tuple[Any, ...]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class UserPredicate:
    """A predicate registered from Python, applied to terms at the current position."""

    name: str
    args: tuple[Term, ...]
    span: Span | None = span_field()


Formula: TypeAlias = (
    Const
    | Event
    | Compare
    | Not
    | And
    | Or
    | Implies
    | Iff
    | Next
    | Eventually
    | Always
    | Until
    | WeakUntil
    | Release
    | Yesterday
    | Once
    | Historically
    | Since
    | Quantified
    | TracePredicate
    | UserPredicate
)
