"""Score many traces against one spec: ``verify_traces``.

Scoring a corpus of short traces one by one spends most of its time on Python dispatch
over every formula node, per trace. Here the spec is compiled once, and the constraints
in the temporal fragment (event atoms whose tests compare against constants, boolean
connectives, future and past operators) are evaluated in one pass over all traces laid
end to end (:mod:`agentguard.semantics.segmented`); their explanations are computed for
groups of traces at a time. A constraint outside the fragment (trace predicates,
quantifiers, comparisons, user predicates, metrics), or one whose bulk evaluation
raises, is scored per trace by the ordinary evaluator. Every report equals what
``verify_trace`` returns for that trace, field for field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, count
from operator import attrgetter
from typing import Any

import numpy as np

from agentguard._recursion import allow_deep
from agentguard.language import ast as A
from agentguard.language.dialogue import judged, spec_mentions_dialogue
from agentguard.language.printer import formula as show
from agentguard.scoring.report import ComplianceReport, ConstraintResult, score_of
from agentguard.scoring.verify import (
    _spec_from,
    as_trace,
    assemble_report,
    constraint_result,
    details_of,
    missing_tool_candidates,
)
from agentguard.semantics import segmented as S
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.event_tests import run_test
from agentguard.semantics.registry import Matcher, Registry
from agentguard.semantics.values import call_field, compile_regex
from agentguard.semantics.vectors import BINARY, UNARY, BoolVec, Value, connective
from agentguard.trace.model import Call, Trace

_NAME = attrgetter("name")
_PASSED = attrgetter("passed")
TraceLike = Trace | Mapping[str, Any] | Sequence[Any]


@allow_deep
def verify_traces(
    traces: Iterable[TraceLike],
    spec: A.Spec | Sequence[A.Constraint] | str | os.PathLike[str],
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
) -> list[ComplianceReport]:
    """``[verify_trace(t, spec) for t in traces]``, computed in bulk.

    ``traces`` holds anything ``verify_trace`` accepts (traces, metrics records, call
    records, chat messages); ``spec`` is a parsed spec, its constraints, a ``.ltl`` path
    or spec text, compiled once for the whole batch.
    """
    if isinstance(spec, (str, os.PathLike)):
        spec = _spec_from(spec, registry)
    constraints = spec.constraints if isinstance(spec, A.Spec) else tuple(spec)
    dialogue = spec_mentions_dialogue(spec)  # as verify_trace: messages only if named
    loaded = [judged(as_trace(t), dialogue) for t in traces]
    names = [tuple(map(_NAME, t.calls)) for t in loaded]  # Trace.names, without a genexpr
    bulk = _Bulk(loaded, names)
    fallback: dict[int, Evaluator] = {}

    def evaluator(t: int) -> Evaluator:
        ev = fallback.get(t)
        if ev is None:
            ev = fallback[t] = Evaluator(loaded[t], registry=registry, match=match)
        return ev

    columns: list[list[ConstraintResult]] = []
    for c in constraints:
        scored = bulk.score(c)
        if scored is None:
            columns.append([constraint_result(c, evaluator(t)) for t in range(len(loaded))])
        elif len(bulk.rows) == len(loaded):
            columns.append(scored)
        else:  # empty traces keep the evaluator's own rules
            column: list[ConstraintResult | None] = [None] * len(loaded)
            for t, result in zip(bulk.rows, scored, strict=True):
                column[t] = result
            columns.append(
                [
                    r if r is not None else constraint_result(c, evaluator(t))
                    for t, r in enumerate(column)
                ]
            )
    return _reports(columns, spec, loaded, names, missing_tool_candidates(constraints))


def _reports(
    columns: list[list[ConstraintResult]],
    spec: A.Spec | Sequence[A.Constraint],
    traces: list[Trace],
    names: list[tuple[str, ...]],
    candidates: tuple[str, ...],
) -> list[ComplianceReport]:
    """One report per trace; traces with the same outcomes share their score and details
    (which depend only on which constraints passed, and on the tools called when the
    details name missing tools)."""
    rows: list[tuple[ConstraintResult, ...]] = (
        list(zip(*columns, strict=True)) if columns else [()] * len(traces)
    )
    summaries: dict[tuple[bool, ...], tuple[float, str]] = {}
    out = []
    for t, row in enumerate(rows):
        summary = None
        if not candidates:
            key = tuple(map(_PASSED, row))
            summary = summaries.get(key)
            if summary is None:
                summary = summaries[key] = (score_of(row), details_of(row, (), names[t]))
        out.append(assemble_report(row, spec, traces[t], names[t], candidates, summary))
    return out


class _Bulk:
    """The non-empty traces laid end to end, with the fragment's values over all of them."""

    def __init__(self, traces: list[Trace], names: list[tuple[str, ...]]) -> None:
        self.traces = traces
        # the non-empty traces, in order; an empty one keeps the evaluator's own rules
        self.rows = [t for t, n in enumerate(names) if n]
        self.seg = S.Segments([len(names[t]) for t in self.rows])
        self.names = names
        # a code per tool name (its first position: unique, not dense), in one pass
        codes: dict[str, int] = {}
        self.codes = codes
        self.code_vec = np.fromiter(
            map(codes.setdefault, chain.from_iterable(names), count()),
            dtype=np.int64,
            count=self.seg.n,
        )
        self._calls: list[Call] | None = None
        self._values: dict[int, Value] = {}
        self._pinned: list[A.Formula] = []  # keeps every id() key of _values alive
        self._shown: dict[int, str] = {}
        self._starts: dict[int, BoolVec] = {}
        self._firsts: dict[tuple[int, bool], S.Index] = {}

    # ---------------------------------------------------------------- scoring
    def score(self, c: A.Constraint) -> list[ConstraintResult] | None:
        """One result per non-empty trace (``rows``), or None to score ``c`` trace by trace."""
        if not self.rows or not _in_fragment(c.formula):
            return None
        try:
            passed = self.start(c.formula)
            details = self._explain(c.formula, np.arange(len(self.rows)), passed)
        except Exception:  # noqa: BLE001 - the per-trace path reproduces the error exactly
            return None
        outcomes = list(zip(passed.tolist(), details, strict=True))
        severity = str(c.severity)
        shared = {  # one result object per distinct outcome (they are immutable)
            (ok, detail): ConstraintResult(
                c.name, c.layer, c.weight, ok, detail, severity, c.message, None
            )
            for ok, detail in set(outcomes)
        }
        return list(map(shared.__getitem__, outcomes))

    def start(self, f: A.Formula) -> BoolVec:
        """Truth of ``f`` at each row's first position.

        At the top of a constraint, ``G φ`` and ``F φ`` need only each segment's first
        failure or witness of ``φ``, one reduction, not the vector at every position.
        """
        key = id(f)
        hit = self._starts.get(key)
        if hit is not None:
            return hit
        out: BoolVec
        if isinstance(f, A.Always) and f.bound is None:
            out = self._first(f.operand, negated=True) < 0
        elif isinstance(f, A.Eventually) and f.bound is None:
            out = self._first(f.operand, negated=False) >= 0
        elif isinstance(f, A.Not):
            out = ~self.start(f.operand)
        elif isinstance(f, (A.And, A.Or, A.Implies, A.Iff)):
            left, right = self.start(f.left), self.start(f.right)
            if isinstance(f, A.And):
                out = left & right
            elif isinstance(f, A.Or):
                out = left | right
            elif isinstance(f, A.Implies):
                out = ~left | right
            else:
                out = left == right
        else:
            out = self._at_start(self.value(f))
        self._starts[key] = out
        self._pinned.append(f)
        return out

    def _first(self, f: A.Formula, *, negated: bool) -> S.Index:
        """Per row, the global index of the first position where ``f`` (or ``!f``) holds,
        or -1."""
        key = (id(f), negated)
        hit = self._firsts.get(key)
        if hit is None:
            vec = self._vec(self.value(f))
            hit = self._firsts[key] = S.first_true(~vec if negated else vec, self.seg)
            self._pinned.append(f)
        return hit

    def _at_start(self, v: Value) -> BoolVec:
        if isinstance(v, bool):
            return np.full(len(self.rows), v, dtype=bool)
        out: BoolVec = v[self.seg.starts]
        return out

    def _vec(self, v: Value) -> BoolVec:
        return np.full(self.seg.n, v, dtype=bool) if isinstance(v, bool) else v

    # ---------------------------------------------------------------- values
    def value(self, f: A.Formula) -> Value:
        hit = self._values.get(id(f))
        if hit is None:
            hit = self._values[id(f)] = self._compute(f)
            self._pinned.append(f)
        return hit

    def _compute(self, f: A.Formula) -> Value:
        if isinstance(f, A.Const):
            return f.value
        if isinstance(f, A.Event):
            return self._event(f)
        if isinstance(f, A.Not):
            v = self.value(f.operand)
            return (not v) if isinstance(v, bool) else ~v
        if isinstance(f, (A.And, A.Or, A.Implies, A.Iff)):
            return connective(f, self.value(f.left), self.value(f.right), self.seg.n)
        if isinstance(f, UNARY):
            return S.unary(f, self._vec(self.value(f.operand)), self.seg)
        if isinstance(f, BINARY):
            left_vec = self._vec(self.value(f.left))
            return S.binary(f, left_vec, self._vec(self.value(f.right)), self.seg)
        raise TypeError(f"outside the bulk fragment: {type(f).__name__}")

    def _event(self, f: A.Event) -> BoolVec:
        if f.tool is None:
            mask = np.ones(self.seg.n, dtype=bool)
        else:
            code = self.codes.get(f.tool)
            mask = np.zeros(self.seg.n, dtype=bool) if code is None else self.code_vec == code
        if not f.tests:
            return mask
        expected = [(t, _operand(t)) for t in f.tests]
        calls = self._flat_calls()
        out = np.zeros(self.seg.n, dtype=bool)
        for i in np.flatnonzero(mask).tolist():
            call = calls[i]
            out[i] = all(run_test(call_field(call, t.field.path), t, v) for t, v in expected)
        return out

    def _flat_calls(self) -> list[Call]:
        if self._calls is None:
            self._calls = [c for t in self.rows for c in self.traces[t].calls]
        return self._calls

    # ---------------------------------------------------------------- explanations
    def _explain(self, f: A.Formula, group: np.ndarray[Any, Any], passed: BoolVec) -> list[str]:
        """``explain(f, ev, passed)`` for the traces ``group`` (row numbers), in order.

        The same branches as :func:`agentguard.scoring.explain.explain`, restricted to
        the fragment and taken for a whole group of traces at once.
        """
        lengths = self.seg.lengths[group].tolist()
        if isinstance(f, A.Always) and f.bound is None:
            bad = self._first(f.operand, negated=True)[group]
            inner = self._show(f.operand)
            return [
                f"Held at all {n} call(s)."
                if ok
                else f"Violated at {self._call(r, k)}: {inner} does not hold there."
                for ok, n, r, k in zip(
                    passed.tolist(), lengths, group.tolist(), self._local(bad, group), strict=True
                )
            ]
        if isinstance(f, A.Eventually) and f.bound is None:
            good = self._first(f.operand, negated=False)[group]
            inner = self._show(f.operand)
            return [
                f"Satisfied at {self._call(r, k)}."
                if ok
                else f"Never satisfied in {n} call(s): {inner}."
                for ok, n, r, k in zip(
                    passed.tolist(), lengths, group.tolist(), self._local(good, group), strict=True
                )
            ]
        if isinstance(f, A.And):  # a failed conjunction is explained by its first failed part
            out = self._generic(f, passed, lengths)
            left = self.start(f.left)[group]
            right = self.start(f.right)[group]
            for part, pick in ((f.left, ~passed & ~left), (f.right, ~passed & left & ~right)):
                chosen = np.flatnonzero(pick)
                if chosen.size:
                    sub = self._explain(part, group[chosen], np.zeros(chosen.size, dtype=bool))
                    for k, text in zip(chosen.tolist(), sub, strict=True):
                        out[k] = text
            return out
        if isinstance(f, A.Implies):
            left = self.start(f.left)[group]
            vacuous = f"Vacuously true: {self._show(f.left)} does not hold."
            out = [vacuous] * len(lengths)
            chosen = np.flatnonzero(left)
            if chosen.size:
                sub = self._explain(f.right, group[chosen], passed[chosen])
                for k, text in zip(chosen.tolist(), sub, strict=True):
                    out[k] = text
            return out
        return self._generic(f, passed, lengths)

    def _generic(self, f: A.Formula, passed: BoolVec, lengths: list[int]) -> list[str]:
        shown = self._show(f)
        return [
            f"{shown} {'holds' if ok else 'does not hold'} on the {n}-call trace."
            for ok, n in zip(passed.tolist(), lengths, strict=True)
        ]

    def _local(self, positions: S.Index, group: np.ndarray[Any, Any]) -> list[int]:
        """Global positions (or -1) of the rows ``group`` as positions in their own trace."""
        out: list[int] = (positions - self.seg.starts[group]).tolist()
        return out

    def _call(self, row: int, local: int) -> str:
        """``call #k ("name")`` for position ``local`` of row ``row``'s trace."""
        return f'call #{local + 1} ("{self.names[self.rows[row]][local]}")'

    def _show(self, f: A.Formula) -> str:
        text = self._shown.get(id(f))
        if text is None:
            text = self._shown[id(f)] = show(f)
            self._pinned.append(f)
        return text


def _operand(test: A.Test) -> Any:
    if isinstance(test.value, A.Regex):
        return compile_regex(test.value.pattern, test.value.flags)
    return _constant(test.value)


def _constant(t: A.Term) -> Any:
    if isinstance(t, A.Literal):
        return t.value
    if isinstance(t, A.ListLiteral):
        return [_constant(x) for x in t.items]
    if isinstance(t, A.MapLiteral):
        return {k: _constant(v) for k, v in t.items}
    if isinstance(t, A.Regex):
        return compile_regex(t.pattern, t.flags)
    raise TypeError(f"not a constant: {type(t).__name__}")


def _is_constant(t: Any) -> bool:
    if isinstance(t, (A.Literal, A.Regex)):
        return True
    if isinstance(t, A.ListLiteral):
        return all(_is_constant(x) for x in t.items)
    if isinstance(t, A.MapLiteral):
        return all(_is_constant(v) for _, v in t.items)
    return False


def _in_fragment(f: A.Formula) -> bool:
    """Is ``f`` made of event atoms with constant tests, connectives and temporal operators?"""
    if isinstance(f, A.Const):
        return True
    if isinstance(f, A.Event):
        return all(_is_constant(t.value) for t in f.tests)
    if isinstance(f, A.Not):
        return _in_fragment(f.operand)
    if isinstance(f, UNARY):
        return _in_fragment(f.operand)
    if isinstance(f, (A.And, A.Or, A.Implies, A.Iff, *BINARY)):
        return _in_fragment(f.left) and _in_fragment(f.right)
    return False
