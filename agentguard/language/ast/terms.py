"""AgentLTL terms: constants, variables, field and metric references, domains.

Spans are kept for error messages but never compared, so a printed-and-reparsed tree
equals the original; constants compare by :func:`literal_identity` (value and JSON type).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True, slots=True)
class Span:
    """Location of a node in its source text (1-based)."""

    source: str
    line: int
    column: int
    end_line: int
    end_column: int


def span_field() -> Any:
    """A node's ``span``: kept for messages, never compared, so a reparsed tree is equal."""
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


def identity_field() -> Any:
    """A field ``__post_init__`` fills from :func:`literal_identity` (not an argument)."""
    return field(init=False, repr=False)


STAR = "\n[*]"
"""The path step ``[*]``: map the rest of the path over each element of a list.

A string no spec can spell as a key (a name or quoted name never holds a newline), so
paths stay ``tuple[str | int, ...]``; :func:`~agentguard.semantics.values.get_path`
checks for it before any key lookup, so no data key is ever read as the step."""


MATCHES = "\n[~]"
r"""The start of a path step ``[~ /pattern/flags]``: a text becomes the list of the parts
of it the pattern matches, and the rest of the path maps over them as after ``[*]``
(``body[~ /www\.\S+/] not from user``: every link in the body came from the user). The
step is this prefix, the flags, ``/`` and the pattern (:func:`matches_step`); like
:data:`STAR`, no key a spec can spell."""


def matches_step(pattern: str, flags: str) -> str:
    """The path step for ``[~ /pattern/flags]``."""
    return f"{MATCHES}{flags}/{pattern}"


def matches_regex(step: str) -> tuple[str, str]:
    """``(pattern, flags)`` of a :func:`matches_step` step (flags hold no ``/``)."""
    flags, _, pattern = step[len(MATCHES) :].partition("/")
    return pattern, flags


def is_matches(step: str | int) -> bool:
    return type(step) is str and step.startswith(MATCHES)


PROVENANCE_FIELD = "\nfrom"
"""First step of the field a lowered ``from`` test reads (semantics/provenance.py): the
fact the provenance index computed for the call, kept where no argument can be."""


# --------------------------------------------------------------------------- terms
@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: str, int, float, bool, None, a tuple (list) or a MapLiteral.

    Compared and hashed by :func:`literal_identity`, so ``Literal(True) != Literal(1)``.
    """

    value: Any = field(compare=False)
    span: Span | None = span_field()
    identity: Any = identity_field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "identity", literal_identity(self.value))


@dataclass(frozen=True, slots=True)
class MapLiteral:
    """``{k: v, ...}``: an argument sub-mapping; values are terms."""

    items: tuple[tuple[str, Term], ...]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class ListLiteral:
    """``[t1, t2, ...]`` with term elements (may contain variables)."""

    items: tuple[Term, ...]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Regex:
    """``/pattern/flags``: matches with ``re.search``."""

    pattern: str
    flags: str = ""
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Var:
    """A quantified variable, optionally with a path into its value (``x.id``, ``x[0]``)."""

    name: str
    path: tuple[str | int, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A path into the current call: ``("amount",)`` is an argument, ``("result", "x")`` the result."""

    path: tuple[str | int, ...]
    span: Span | None = span_field()

    @property
    def is_result(self) -> bool:
        return bool(self.path) and self.path[0] == "result"


@dataclass(frozen=True, slots=True)
class MetricRef:
    """``metrics.a.b``: a path into the metrics record μ."""

    path: tuple[str | int, ...]
    span: Span | None = span_field()


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
    span: Span | None = span_field()
    extra_identity: Any = identity_field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_identity", literal_identity(self.extra))


SOURCE_KINDS = ("user", "trusted", "untrusted", "results", "args", "values")
"""The kinds of :class:`SourcePart` (``values``: a list written in the spec)."""


@dataclass(frozen=True, slots=True)
class SourcePart:
    """One place values may come from: ``user``, ``trusted``, ``untrusted``,
    ``results(pattern[path])``, ``args(pattern path)`` or a literal list (``values``).

    ``pattern`` is an :class:`~agentguard.language.ast.formulas.Event` (typed ``Any``
    because formulas build on terms); its tests are judged at the earlier call's own
    position. ``values`` holds a ``values`` part's constants.
    """

    kind: str
    pattern: Any = None
    path: tuple[str | int, ...] = ()
    values: ListLiteral | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Source:
    """The right side of ``PATH from SOURCE``: a union of :class:`SourcePart`."""

    parts: tuple[SourcePart, ...]
    span: Span | None = span_field()


Term: TypeAlias = (
    Literal | MapLiteral | ListLiteral | Regex | Var | FieldRef | MetricRef | Domain | Source
)

COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=", "~", "!~", "contains", "in")
PROVENANCE_OPS = ("from", "not from")
"""The test operators whose right side is a :class:`Source`."""
