"""The offline evaluator: exact LTLf semantics of AgentLTL (Appendix A) on a whole trace.

Every subformula is evaluated at *all* positions at once as a boolean vector, bottom-up:
future operators by reverse scans, past operators by forward scans, each O(n) with numpy.
A whole trace therefore costs O(n · |φ|) instead of the O(n² · |φ|) of re-scanning
suffixes per position (the paper's Algorithm 1). Position-independent subformulas
(trace predicates, comparisons of variables and metrics) are computed once as scalars.

Conventions (documented in docs/language.md):

* positions are 0-indexed; ``holds`` evaluates at position 0;
* ``X`` is the strong next (false at the last position), ``N`` the weak next;
  ``Y`` is false at position 0, ``Z`` true there;
* the empty trace: event atoms false, ``X`` false, ``N`` true, ``F``/``U``/``O``/``S``/``Y``
  false, ``G``/``W``/``R``/``H``/``Z`` true; position-independent predicates keep their value;
* quantifiers are instantiated eagerly over the domain extracted from the trace; an
  empty domain makes ``forall`` true and ``exists`` false; inner bindings shadow outer ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_never

from agentguard._recursion import allow_deep
from agentguard.errors import EvaluationError, PredicateError
from agentguard.language import ast as A
from agentguard.semantics import predicates as P
from agentguard.semantics import vectors as V
from agentguard.semantics.compressed import Compressed
from agentguard.semantics.domains import active_domain, extract_domain
from agentguard.semantics.event_tests import EqualityIndex, located, passes
from agentguard.semantics.indexed import Indexed, NotIndexed
from agentguard.semantics.provenance import lower_formula
from agentguard.semantics.provenance_index import annotate_trace
from agentguard.semantics.registry import Matcher, Registry, default_registry
from agentguard.semantics.trace_index import TraceIndex
from agentguard.semantics.values import (
    MISSING,
    compare,
    data_regex,
    flatten_values,
    get_path,
    outcome_is,
)
from agentguard.semantics.variables import collect_sites, free_variables, shared_free_memo
from agentguard.trace.model import Trace

BoolVec = V.BoolVec
Value = V.Value
Env = Mapping[str, Any]


class Evaluator:
    """Evaluates formulas on one trace; caches closed subformulas across constraints."""

    def __init__(
        self,
        trace: Trace | TraceIndex,
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        indexed: bool = True,
    ) -> None:
        """``indexed=False`` decides top-level quantifiers one value at a time (the
        reference the index is tested and benchmarked against)."""
        self.idx = trace if isinstance(trace, TraceIndex) else TraceIndex(trace)
        self.n = self.idx.n
        self.registry = registry or default_registry
        self.match: Matcher = match or self.registry.matcher or P.values_match
        self._cache: dict[Any, Value] = {}
        # Caches below are keyed by id(node); pinning each node keeps it alive for the
        # evaluator's lifetime, so an id can never be reused by another formula.
        self._pinned: list[Any] = []
        self._free = shared_free_memo()  # pure in the node: shared by every evaluator
        self._compressed = Compressed(self)
        self._indexed = Indexed(self) if indexed else None
        self._domains: dict[Any, list[Any]] = {}  # parametric domains depend on the trace only
        self.eq = EqualityIndex(self.idx)

    # ---------------------------------------------------------------- public
    def holds(self, formula: A.Formula, position: int = 0, env: Env | None = None) -> bool:
        """Truth of ``formula`` at ``position`` (0 by default)."""
        if self.n == 0:
            return self.empty_value(formula, env or {})
        if isinstance(formula, A.Quantified):
            # at a single position a counterexample (forall) or witness (exists) decides:
            # stop instantiating at the first one instead of building every instance's vector
            want = formula.kind == "exists"
            return (self.decisive_value(formula, position, env or {}) is not None) == want
        value = self.value(formula, env or {})
        if isinstance(value, bool):
            return value
        if not 0 <= position < self.n:
            raise EvaluationError(f"position {position} is outside a trace of length {self.n}")
        return bool(value[position])

    def decisive_value(
        self, f: A.Quantified, position: int = 0, env: Env | None = None
    ) -> tuple[Any] | None:
        """The first domain value that decides ``f`` at ``position``: a counterexample of a
        ``forall`` or a witness of an ``exists`` (wrapped in a 1-tuple), else None."""
        env = env or {}
        values = self.parametric_domain(f) if f.domain is None else self.domain(f.domain, env)
        if position == 0 and self.n > 0 and self._indexed is not None:
            try:
                return self._indexed.decide(f, values, env)
            except NotIndexed:
                pass
        want = f.kind == "exists"
        compressed = position == 0 and self.n > 0 and self._compressed.applies(f.body)
        for v in values:
            inner = {**env, f.var: v}
            if compressed:
                got = self._compressed.holds_at_start(f.body, inner)
            else:
                got = self.holds(f.body, position, inner)
            if got == want:
                return (v,)
        return None

    # ---------------------------------------------------------------- for the index
    def instance_holds(self, body: A.Formula, env: Env) -> bool:
        """Truth at position 0 of one quantifier instance (compressed when it can be)."""
        if self._compressed.applies(body):
            return self._compressed.holds_at_start(body, env)
        return self.holds(body, 0, env)

    def holds_at_start(
        self, body: A.Formula, env: Env, hits: Callable[[A.Event], Sequence[int] | None]
    ) -> bool:
        """A step-free instance at position 0, with event positions already known."""
        return self._compressed.holds_at_start(body, env, hits)

    def step_free(self, f: A.Formula) -> bool:
        return self._compressed.applies(f)

    def test_operand(self, test: A.Test, env: Env) -> Any:
        return self._test_operand(test, env)

    def vector(self, formula: A.Formula, env: Env | None = None) -> BoolVec:
        """Truth of ``formula`` at every position."""
        return self._vec(self.value(formula, env or {}))

    # ---------------------------------------------------------------- core
    def value(self, f: A.Formula, env: Env) -> Value:
        closed = not self.free_vars(f)
        if closed:
            key: Any = f if isinstance(f, (A.Event, A.TracePredicate)) else id(f)
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        out = self._compute(f, env)
        if closed:
            self._cache[key] = out
            self._pinned.append(f)
        return out

    def _vec(self, v: Value) -> BoolVec:
        if isinstance(v, bool):
            return np.full(self.n, v, dtype=bool)
        return v

    def _compute(self, f: A.Formula, env: Env) -> Value:
        if isinstance(f, A.Const):
            return f.value
        if isinstance(f, A.Event):
            return self._event(f, env)
        if isinstance(f, A.Not):
            v = self.value(f.operand, env)
            return (not v) if isinstance(v, bool) else ~v
        if isinstance(f, (A.And, A.Or, A.Implies, A.Iff)):
            return self._boolean(f, env)
        if isinstance(f, V.UNARY):
            return V.unary(f, self._vec(self.value(f.operand, env)))
        if isinstance(f, V.BINARY):
            left = self._vec(self.value(f.left, env))
            return V.binary(f, left, self._vec(self.value(f.right, env)))
        if isinstance(f, A.Quantified):
            return self._quantified(f, env)
        if isinstance(f, A.TracePredicate):
            return self._trace_predicate(f, env)
        if isinstance(f, A.Compare):
            return self._compare(f, env)
        if isinstance(f, A.UserPredicate):
            return self._user_predicate(f, env)
        assert_never(f)

    def _boolean(self, f: A.And | A.Or | A.Implies | A.Iff, env: Env) -> Value:
        left = self.value(f.left, env)
        # short-circuit on scalars: a constant left side often decides the result
        if isinstance(left, bool):
            if isinstance(f, A.And) and not left:
                return False
            if isinstance(f, A.Or) and left:
                return True
            if isinstance(f, A.Implies) and not left:
                return True
        return V.connective(f, left, self.value(f.right, env), self.n)

    # ---------------------------------------------------------------- atoms
    def _event(self, f: A.Event, env: Env) -> Value:
        if not f.tests and f.outcome is None:
            return self.idx.mask(f.tool) if f.tool is not None else np.ones(self.n, dtype=bool)
        out = np.zeros(self.n, dtype=bool)
        out[self.event_positions(f, env)] = True
        return out

    def event_positions(self, f: A.Event, env: Env) -> npt.NDArray[np.int64]:
        """The positions (ascending) where the event atom holds under ``env``."""
        return np.asarray(self.event_hits(f, env), dtype=np.int64)

    def event_hits(self, f: A.Event, env: Env) -> Sequence[int]:
        """Like :meth:`event_positions`, as a plain ascending sequence (cheap when sparse)."""
        calls = self.idx.trace.calls
        if not f.tests:
            found: Sequence[int] = (
                range(self.n) if f.tool is None else self.idx.positions.get(f.tool, ())
            )
            if f.outcome is None:
                return found
            return [i for i in found if outcome_is(calls[i], f.outcome)]
        try:
            expected = [(t, self._test_operand(t, env)) for t in f.tests]
        except EvaluationError as exc:
            raise located(exc, f) from None
        return [
            i
            for i in self.eq.candidates(f, expected)
            if passes(calls[i], f, expected)
            and (f.outcome is None or outcome_is(calls[i], f.outcome))
        ]

    def _test_operand(self, test: A.Test, env: Env) -> Any:
        if isinstance(test.value, A.Regex):
            return data_regex(test.value.pattern, test.value.flags)
        return self.term(test.value, env)

    def term(self, t: A.Term, env: Env) -> Any:
        """The plain value of a term under ``env``."""
        if isinstance(t, A.Literal):
            return t.value
        if isinstance(t, A.Var):
            if t.name not in env:
                raise EvaluationError(f"unbound variable {t.name!r}")
            return get_path(env[t.name], t.path)
        if isinstance(t, A.MetricRef):
            return get_path(self.idx.metrics, t.path)
        if isinstance(t, A.ListLiteral):
            return [self.term(x, env) for x in t.items]
        if isinstance(t, A.MapLiteral):
            return {k: self.term(v, env) for k, v in t.items}
        if isinstance(t, A.Regex):
            return data_regex(t.pattern, t.flags)
        if isinstance(t, A.Domain):
            return self.domain(t, env)
        raise EvaluationError(f"{type(t).__name__} is not a value here")

    def _compare(self, f: A.Compare, env: Env) -> bool:
        try:
            return compare(self.term(f.left, env), f.op, self.term(f.right, env))
        except EvaluationError as exc:
            raise located(exc, f) from None

    def _user_predicate(self, f: A.UserPredicate, env: Env) -> bool:
        entry = self.registry.predicates.get(f.name)
        if entry is None:
            raise PredicateError(f"predicate {f.name!r} is declared but not registered")
        args = [self.term(a, env) for a in f.args]
        if any(a is MISSING for a in args):
            return False
        try:
            return bool(entry[0](*args))
        except Exception as exc:
            raise PredicateError(
                f"predicate {f.name!r} raised {type(exc).__name__}: {exc}"
            ) from exc

    def _trace_predicate(self, f: A.TracePredicate, env: Env) -> Value:
        if f.name == "Predicate":
            return self._context_predicate(f.args[0])
        resolve = self.resolver(env)
        return P.evaluate(P.ground(f, resolve), self.idx, resolve, self.match, self._context_scalar)

    def resolver(self, env: Env) -> P.Resolve:
        """``term`` under ``env``, as the trace predicates take it."""
        return lambda t: self.term(t, env)

    def _context_scalar(
        self, name: str
    ) -> bool:  # pragma: no cover - Predicate is vectorised above
        return bool(self._vec(self._context_predicate(name))[0]) if self.n else False

    def _context_predicate(self, name: str) -> Value:
        fn = self.registry.context_predicates.get(name)
        if fn is None:
            raise PredicateError(f"Predicate({name}) is declared but not registered")
        trace, metrics = self.idx.trace, self.idx.metrics
        try:
            if self.n == 0:
                return bool(fn(trace, 0, metrics))
            return np.fromiter(
                (bool(fn(trace, i, metrics)) for i in range(self.n)), dtype=bool, count=self.n
            )
        except Exception as exc:
            raise PredicateError(f"Predicate({name}) raised {type(exc).__name__}: {exc}") from exc

    # ---------------------------------------------------------------- quantifiers
    def _quantified(self, f: A.Quantified, env: Env) -> Value:
        values = self.parametric_domain(f) if f.domain is None else self.domain(f.domain, env)
        forall = f.kind == "forall"
        acc: Value = forall
        for v in values:
            inner = {**env, f.var: v}
            val = self._instance(f.body, inner)
            if isinstance(val, bool):
                if val != forall:  # a counterexample / witness decides everywhere
                    return val
                continue
            acc = (self._vec(acc) & val) if forall else (self._vec(acc) | val)
        return acc

    def _instance(self, body: A.Formula, env: Env) -> Value:
        return self.value(body, env) if self.n else self.empty_value(body, env)

    def domain(self, d: A.Domain | A.ListLiteral, env: Env) -> list[Any]:
        """The elements of a domain on this trace (deduplicated, first-seen order)."""
        if isinstance(d, A.ListLiteral):
            return flatten_values([self.term(x, env) for x in d.items])
        return extract_domain(self.idx, self.registry, d)

    def parametric_domain(self, f: A.Quantified) -> list[Any]:
        """The active domain of ``forall x: body``: values at the fields ``x`` is tested against."""
        key = id(f)
        hit = self._domains.get(key)
        if hit is None:
            sites: list[tuple[str | None, tuple[str | int, ...], bool]] = []
            collect_sites(f.body, f.var, sites)
            shared = tuple(sites)  # constraints over the same fields share one domain
            hit = self._domains.get(shared)
            if hit is None:
                hit = self._domains[shared] = active_domain(self.idx, sites)
            self._domains[key] = hit
            self._pinned.append(f)
        return hit

    # ---------------------------------------------------------------- empty trace
    def empty_value(self, f: A.Formula, env: Env) -> bool:
        """Truth at position 0 of the empty trace (see the module docstring)."""
        if isinstance(f, A.Const):
            return f.value
        if isinstance(f, A.Event):
            return False
        if isinstance(f, A.Not):
            return not self.empty_value(f.operand, env)
        if isinstance(f, A.And):
            return self.empty_value(f.left, env) and self.empty_value(f.right, env)
        if isinstance(f, A.Or):
            return self.empty_value(f.left, env) or self.empty_value(f.right, env)
        if isinstance(f, A.Implies):
            return (not self.empty_value(f.left, env)) or self.empty_value(f.right, env)
        if isinstance(f, A.Iff):
            return self.empty_value(f.left, env) == self.empty_value(f.right, env)
        if isinstance(f, (A.Next, A.Yesterday)):
            return not f.strong
        if isinstance(f, (A.Eventually, A.Once, A.Until, A.Since)):
            return False
        if isinstance(f, (A.Always, A.Historically, A.WeakUntil, A.Release)):
            return True
        if isinstance(f, A.Quantified):
            return bool(self._quantified(f, env))
        if isinstance(f, A.TracePredicate):
            return bool(self._trace_predicate(f, env))
        if isinstance(f, A.Compare):
            return self._compare(f, env)
        if isinstance(f, A.UserPredicate):
            return self._user_predicate(f, env)
        assert_never(f)

    # ---------------------------------------------------------------- free variables
    def pin(self, node: Any) -> None:
        """Keep ``node`` alive while this evaluator lives (its id keys a cache)."""
        self._pinned.append(node)

    def free_vars(self, f: Any) -> frozenset[str]:
        return free_variables(f, self._free)


@allow_deep
def holds(
    formula: A.Formula | str,
    trace: Trace | Mapping[str, Any] | Sequence[Any],
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
    position: int = 0,
) -> bool:
    """Does ``trace`` satisfy ``formula`` (at ``position``, 0 by default)?

    ``formula`` may be AgentLTL text, and ``trace`` a metrics record, a list of call
    records or chat messages (anything :func:`agentguard.trace.trace_from_json` reads).
    """
    if isinstance(formula, str):
        from agentguard.language import parse_formula

        formula = parse_formula(formula, registry=registry)
    if not isinstance(trace, Trace):
        from agentguard.language.dialogue import judged, mentions_dialogue
        from agentguard.trace.loaders import trace_from_json

        # a record read here keeps its messages only for a formula that names one (as
        # verify_trace); a Trace given is judged as it is, positions included
        trace = judged(
            trace_from_json(trace, source="<input>", messages=True), mentions_dialogue([formula])
        )
    formula, plan = lower_formula(formula)
    if plan is not None:  # `from` tests read facts of each call's view (semantics/provenance.py)
        trace = annotate_trace(plan, trace)
    return Evaluator(trace, registry=registry, match=match).holds(formula, position)
