"""The AgentLTL syntax tree: frozen, slotted, behaviour-free dataclasses.

Two layers:

* **Formulas** (:data:`Formula`): what evaluation, monitoring and printing work on.
  Every name here is resolved: a tool atom is an :class:`Event`, a trace predicate
  is a :class:`TracePredicate`, a user predicate a :class:`UserPredicate`.
* **Spec items** (:class:`Spec`, :class:`Constraint`, :class:`ToolDecl`, ...).

Spans are kept for error messages but never compared, so a printed-and-reparsed
tree equals the original.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from agentguard.severity import DEFAULT_SEVERITY, Severity


@dataclass(frozen=True, slots=True)
class Span:
    """Location of a node in its source text (1-based)."""

    source: str
    line: int
    column: int
    end_line: int
    end_column: int


def _span() -> Any:
    return field(default=None, compare=False, repr=False)


def literal_identity(value: Any) -> Any:
    """What makes two constants the same constant: their value *and* their JSON type.

    Python has ``True == 1`` and ``hash(False) == hash(0)``, so nodes compared by value
    would merge ``k = true`` with ``k = 1`` in every cache keyed on nodes (the evaluator's,
    the monitor's atom table). The identity tags each scalar with its type, recursively
    through lists and maps; ``1`` and ``1.0`` stay distinct nodes too (they evaluate alike).
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)
    if isinstance(value, (list, tuple)):
        return ("list", tuple(literal_identity(v) for v in value))
    if isinstance(value, Mapping):
        return ("map", tuple((str(k), literal_identity(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def _identity() -> Any:
    return field(init=False, repr=False)


# --------------------------------------------------------------------------- terms
@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: str, int, float, bool, None, a tuple (list) or a MapLiteral.

    Compared and hashed by :func:`literal_identity`, so ``Literal(True) != Literal(1)``.
    """

    value: Any = field(compare=False)
    span: Span | None = _span()
    identity: Any = _identity()

    def __post_init__(self) -> None:
        object.__setattr__(self, "identity", literal_identity(self.value))


@dataclass(frozen=True, slots=True)
class MapLiteral:
    """``{k: v, ...}``: an argument sub-mapping; values are terms."""

    items: tuple[tuple[str, Term], ...]
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class ListLiteral:
    """``[t1, t2, ...]`` with term elements (may contain variables)."""

    items: tuple[Term, ...]
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Regex:
    """``/pattern/flags``: matches with ``re.search``."""

    pattern: str
    flags: str = ""
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Var:
    """A quantified variable, optionally with a path into its value (``x.id``, ``x[0]``)."""

    name: str
    path: tuple[str | int, ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A path into the current call: ``("amount",)`` is an argument, ``("result", "x")`` the result."""

    path: tuple[str | int, ...]
    span: Span | None = _span()

    @property
    def is_result(self) -> bool:
        return bool(self.path) and self.path[0] == "result"


@dataclass(frozen=True, slots=True)
class MetricRef:
    """``metrics.a.b``: a path into the metrics record μ."""

    path: tuple[str | int, ...]
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Domain:
    """A domain extractor application: ``args(tool.path)``, ``results(tool.path)``, ``entities(...)``.

    ``tool`` and ``path`` are the conventional (tool, path) argument; ``extra`` any other
    literal arguments of a user extractor.
    """

    extractor: str
    tool: str | None = None
    path: tuple[str | int, ...] = ()
    extra: tuple[Any, ...] = field(default=(), compare=False)
    span: Span | None = _span()
    extra_identity: Any = _identity()

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_identity", literal_identity(self.extra))


Term: TypeAlias = Literal | MapLiteral | ListLiteral | Regex | Var | FieldRef | MetricRef | Domain

COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=", "~", "!~", "contains", "in")


# ------------------------------------------------------------------------ formulas
@dataclass(frozen=True, slots=True)
class Const:
    value: bool
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Test:
    """``field op value`` inside an event atom; ``field`` is a FieldRef."""

    field: FieldRef
    op: str
    value: Term
    span: Span | None = _span()


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
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Compare:
    """``left op right`` between terms (variables, metrics, literals, domains)."""

    left: Term
    op: str
    right: Term
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Not:
    operand: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class And:
    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Or:
    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Implies:
    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Iff:
    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Next:
    """``X φ`` (strong: false at the last position) or ``N φ`` (weak: true there)."""

    operand: Formula
    strong: bool = True
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Eventually:
    """``F φ``; with ``bound`` k, ``F[<=k] φ``: within positions i..i+k."""

    operand: Formula
    bound: int | None = None
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Always:
    """``G φ``; with ``bound`` k, ``G[<=k] φ``: at positions i..min(i+k, n-1)."""

    operand: Formula
    bound: int | None = None
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Until:
    """``φ U ψ`` (strong)."""

    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class WeakUntil:
    """``φ W ψ``."""

    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Release:
    """``φ R ψ``."""

    left: Formula
    right: Formula
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Yesterday:
    """``Y φ`` (strong: false at position 0) or ``Z φ`` (weak: true at position 0)."""

    operand: Formula
    strong: bool = True
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Once:
    """``O φ``; with ``bound`` k, ``O[<=k] φ``: at one of positions max(0, i-k)..i."""

    operand: Formula
    bound: int | None = None
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Historically:
    """``H φ``; with ``bound`` k, ``H[<=k] φ``."""

    operand: Formula
    bound: int | None = None
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Since:
    """``φ S ψ``: ψ held at some j <= i and φ at every position in (j, i]."""

    left: Formula
    right: Formula
    span: Span | None = _span()


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
    span: Span | None = _span()


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
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class UserPredicate:
    """A predicate registered from Python, applied to terms at the current position."""

    name: str
    args: tuple[Term, ...]
    span: Span | None = _span()


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


# ----------------------------------------------------------------------- spec items
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

    ``enum`` (the values the argument may take) and ``items`` (the element type of a
    ``list``) have no spec syntax; loaders of JSON Schema tool definitions fill them.
    """

    name: str
    type: str = "any"
    optional: bool = False
    source: Domain | None = None
    bound: tuple[str, Any] | None = field(default=None, compare=False)
    span: Span | None = _span()
    bound_identity: Any = _identity()
    enum: tuple[Any, ...] | None = field(default=None, compare=False)
    items: str | None = None
    enum_identity: Any = _identity()

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound_identity", literal_identity(self.bound))
        object.__setattr__(self, "enum_identity", literal_identity(self.enum))


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """A ``tool`` declaration: its parameters and its past-time precondition.

    ``allow_extra`` (arguments beyond the declared ones are accepted) has no spec syntax;
    a JSON Schema loader sets it from ``additionalProperties``.
    """

    name: str
    params: tuple[Param, ...] = ()
    requires: Formula | None = None
    span: Span | None = _span()
    allow_extra: bool = False


@dataclass(frozen=True, slots=True)
class Constraint:
    """A weighted, named constraint of a procedure."""

    name: str
    formula: Formula
    layer: str | None = None
    weight: float = 1.0
    severity: Severity = DEFAULT_SEVERITY
    message: str = ""
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Spec:
    """A procedure: constraints with weights, tool declarations, declared externals."""

    name: str | None
    constraints: tuple[Constraint, ...] = ()
    tools: tuple[ToolDecl, ...] = ()
    predicates: tuple[tuple[str, int], ...] = ()  # declared user predicates (name, arity)
    extractors: tuple[str, ...] = ()  # declared user domain extractors
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
