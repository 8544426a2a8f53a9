"""The atoms a compiled machine reads, and their three-valued evaluation on one call.

An atom's value is ``True``, ``False`` or ``None`` (unknown: a test on the result of a
call that has not run yet). Tests follow the offline evaluator exactly (same value
access, same comparisons, same ``{"result": v}`` unwrapping), so a monitor's final
verdict equals ``holds`` on the whole trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Union

from agentguard.errors import EvaluationError, PredicateError
from agentguard.language import ast as A
from agentguard.semantics.event_tests import located
from agentguard.semantics.registry import Matcher, Registry
from agentguard.semantics.values import (
    MISSING,
    CompiledRegex,
    call_field,
    compare,
    data_regex,
    get_path,
    outcome_is,
    unwrap_result,
)
from agentguard.trace.model import Call

Env = Mapping[str, Any]


class _Fresh:
    """A value equal to nothing: stands for every value not seen yet in a quantifier."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<fresh>"


FRESH: Final = _Fresh()


@dataclass(frozen=True, slots=True)
class NonEmpty:
    """True at every position that exists: ``X φ`` progresses to ``NonEmpty & φ``."""


@dataclass(frozen=True, slots=True)
class EventAtom:
    """``tool(tests...)[.ok|.error]``; ``result`` is CalledWithResult's expected result
    (uses ``match``)."""

    tool: str | None
    tests: tuple[A.Test, ...] = ()
    result: A.Term | None = None
    outcome: str | None = None

    @property
    def has_data(self) -> bool:
        return bool(self.tests) or self.result is not None or self.outcome is not None


@dataclass(frozen=True, slots=True)
class PastAtom:
    """The value at the current position of past-time register ``register``."""

    register: int


@dataclass(frozen=True, slots=True)
class FrozenAtom:
    """A position-independent comparison or user predicate: fixed for the whole trace.

    ``metric`` ones are known only when the run ends (metrics); the others depend only
    on quantified variables and are fixed when an instance is created.
    """

    formula: A.Compare | A.UserPredicate
    metric: bool


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A trace predicate under a temporal operator, before the compiler expands it away."""

    index: int


Atom = Union[NonEmpty, EventAtom, PastAtom, FrozenAtom, Placeholder]  # noqa: UP007 - a runtime alias on 3.10


class Unsupported(Exception):  # internal signal, never escapes the compiler
    """A construct the incremental machine cannot follow (the constraint falls back)."""


def term_value(t: A.Term, env: Env, metrics: Mapping[str, Any] | None = None) -> Any:
    """A term's value under ``env`` (metrics only when the run has ended)."""
    if isinstance(t, A.Literal):
        return t.value
    if isinstance(t, A.Var):
        if t.name not in env:
            raise Unsupported(f"unbound variable {t.name}")
        value = env[t.name]
        return value if not t.path else get_path(value, t.path)
    if isinstance(t, A.ListLiteral):
        return [term_value(x, env, metrics) for x in t.items]
    if isinstance(t, A.MapLiteral):
        return {k: term_value(v, env, metrics) for k, v in t.items}
    if isinstance(t, A.Regex):
        return data_regex(t.pattern, t.flags)
    if isinstance(t, A.MetricRef):
        if metrics is None:
            raise Unsupported("metrics are known only at the end")
        return get_path(metrics, t.path)
    raise Unsupported(f"{type(t).__name__} terms are not monitored incrementally")


def run_test(actual: Any, test: A.Test, expected: Any) -> bool:
    """One test on a known value, exactly as the offline evaluator runs it."""
    if compare(actual, test.op, expected):
        return True
    if test.field.path == ("result",) and test.op not in ("!=", "!~"):
        inner = unwrap_result(actual)
        if inner is not MISSING and not isinstance(expected, dict):
            return compare(inner, test.op, expected)
    return False


def eval_event(
    atom: EventAtom, call: Call, env: Env, match: Matcher, *, pending: bool = False
) -> bool | None:
    """Three-valued: None when a result test meets a call whose result is unknown, or an
    outcome test (``.ok`` / ``.error``) meets a ``pending`` call (proposed, not yet run).

    A committed call's outcome is known even without a result: it ran, and ``Call.error``
    says whether it failed (as offline)."""
    if atom.tool is not None and atom.tool != call.name:
        return False
    unknown = False
    if atom.outcome is not None:
        if pending and not call.has_result and not call.error:
            unknown = True
        elif not outcome_is(call, atom.outcome):
            return False
    for test in atom.tests:
        if test.field.is_result and not call.has_result:
            unknown = True
            continue
        expected = term_value(test.value, env)
        try:
            if not run_test(call_field(call, test.field.path), test, expected):
                return False
        except EvaluationError as exc:
            raise located(exc, A.Event(atom.tool, atom.tests, atom.outcome), test.span) from None
    if atom.result is not None:
        if not call.has_result:
            return None
        try:
            matched = match(call.result, term_value(atom.result, env))
        except Unsupported:
            raise
        except Exception as exc:  # a user matcher failing is a defined outcome
            raise PredicateError(f"result matcher raised {type(exc).__name__}: {exc}") from exc
        if not matched:
            return False
    return None if unknown else True


def eval_frozen(
    atom: FrozenAtom, env: Env, metrics: Mapping[str, Any] | None, registry: Registry
) -> bool:
    """Value of a position-independent atom; raises PredicateError like the evaluator."""
    f = atom.formula
    if isinstance(f, A.Compare):
        left, right = term_value(f.left, env, metrics), term_value(f.right, env, metrics)
        try:
            return compare(left, f.op, right)
        except EvaluationError as exc:
            raise located(exc, f) from None
    entry = registry.predicates.get(f.name)
    if entry is None:
        raise PredicateError(f"predicate {f.name!r} is declared but not registered")
    args = [term_value(a, env, metrics) for a in f.args]
    if any(a is MISSING for a in args):
        return False
    try:
        return bool(entry[0](*args))
    except Exception as exc:
        raise PredicateError(f"predicate {f.name!r} raised {type(exc).__name__}: {exc}") from exc


def uses_metrics(t: Any) -> bool:
    """Does a term (or formula part) read the metrics record?"""
    if isinstance(t, A.MetricRef):
        return True
    if isinstance(t, (A.ListLiteral, tuple)):
        items = t.items if isinstance(t, A.ListLiteral) else t
        return any(uses_metrics(x) for x in items)
    if isinstance(t, A.MapLiteral):
        return any(uses_metrics(v) for _, v in t.items)
    if isinstance(t, A.Compare):
        return uses_metrics(t.left) or uses_metrics(t.right)
    if isinstance(t, A.UserPredicate):
        return any(uses_metrics(a) for a in t.args)
    return False


def is_regex(value: Any) -> bool:
    return isinstance(value, CompiledRegex)
