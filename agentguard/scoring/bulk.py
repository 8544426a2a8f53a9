"""One constraint scored on many traces at once: the temporal fragment in bulk.

The fragment: event atoms whose tests compare against constants, boolean connectives,
future and past operators. Its constraints are evaluated over all (non-empty) traces
laid end to end (:mod:`agentguard.semantics.segmented`); the DECLARE shapes at the top
of a constraint are answered from tool positions alone
(:mod:`agentguard.scoring.tool_positions`), and so are the trace predicates of a
DECLARE-style mix, ``Called``, ``CalledN``, ``Before``, ``After`` and ``InOrder``
(:mod:`agentguard.scoring.bulk_predicates`), at the top of a constraint or combined
there by connectives (``Called(a) -> Called(b)`` is ``F a -> F b`` spelt otherwise:
both take this path). Explanations are computed for groups of
traces at a time, and traces whose explanation is the same share one string. Each
result equals what :func:`~agentguard.scoring.verify.constraint_result` gives on that
trace alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from agentguard.language import ast as A
from agentguard.language.printer import formula as show
from agentguard.scoring.builders import constraint_result
from agentguard.scoring.bulk_predicates import Outcome, covered, predicate_outcome
from agentguard.scoring.report import ConstraintResult
from agentguard.scoring.tool_positions import ToolPositions, first_position
from agentguard.semantics import segmented as S
from agentguard.semantics.event_tests import run_test
from agentguard.semantics.values import call_field, compile_regex, outcome_is
from agentguard.semantics.vectors import BINARY, UNARY, BoolVec, Value, connective
from agentguard.trace.model import Call, Trace
from agentguard.trace.tool_codes import tool_code

Rows = np.ndarray[Any, Any]
"""Row numbers (indices into ``Bulk.rows``)."""


class Bulk:
    """The non-empty traces laid end to end, with the fragment's values over all of them."""

    def __init__(self, traces: list[Trace], names: list[tuple[str, ...]]) -> None:
        self.traces = traces
        # the non-empty traces, in order; an empty one keeps the evaluator's own rules
        self.rows = [t for t, n in enumerate(names) if n]
        self.seg = S.Segments([len(names[t]) for t in self.rows])
        self.names = names
        # the tool sequence as integers: each trace's codes (Trace.tool_codes) laid end to
        # end, unless a trace names a tool past the code table (then coded here, per call)
        coded = [traces[t].tool_codes for t in self.rows]
        self.code_of: Callable[[str], int | None] = tool_code
        self.code_vec: S.Index
        if not coded:
            self.code_vec = np.zeros(0, dtype=np.int32)
        elif all(c is not None for c in coded):
            self.code_vec = np.concatenate([c.codes for c in coded if c is not None])
        else:
            local: dict[str, int] = {}
            self.code_of = local.get
            flat = chain.from_iterable(names[t] for t in self.rows)
            self.code_vec = np.fromiter(
                (local.setdefault(n, len(local)) for n in flat), dtype=np.int32, count=self.seg.n
            )
        # a key (position, code) of an explanation: codes and lengths are below the base
        self._base = max(int(self.code_vec.max(initial=0)) + 1, self.seg.n + 1)
        self.tools = ToolPositions(self.code_vec, self.seg)
        self._calls: list[Call] | None = None
        self._values: dict[int, Value] = {}
        self._pinned: list[A.Formula] = []  # keeps every id() key of the caches alive
        self._shown: dict[int, str] = {}
        self._starts: dict[int, BoolVec] = {}
        self._firsts: dict[tuple[int, bool], S.Index] = {}
        self._predicates: dict[int, Outcome] = {}

    # ---------------------------------------------------------------- scoring
    def score(self, c: A.Constraint) -> list[ConstraintResult] | None:
        """One result per non-empty trace (``rows``), or None to score ``c`` trace by trace."""
        if not self.rows:
            return None
        try:
            predicate = predicate_outcome(c.formula, self.tools, self.code_of)
            if predicate is not None:
                passed, keys, text = predicate
                details = Texts.of(keys, text)
            elif in_fragment(c.formula):
                passed = self.start(c.formula)
                details = self._explain(c.formula, np.arange(len(self.rows)), passed)
            else:
                return None
        except Exception:  # noqa: BLE001 - the per-trace path reproduces the error exactly
            return None
        # one result per distinct (passed, detail), shared by its traces (results are
        # immutable); a text is given to traces of one verdict, so a text is an outcome
        verdicts = np.zeros(len(details.table), dtype=bool)
        verdicts[details.index] = passed
        index = details.index
        table = details.table
        if not np.array_equal(verdicts[index], passed):  # not so: one entry per outcome
            _, first, index = np.unique(index * 2 + passed, return_index=True, return_inverse=True)
            verdicts, table = passed[first], [details.table[details.index[k]] for k in first]
        severity = str(c.severity)
        results = np.empty(len(table), dtype=object)
        results[:] = [
            constraint_result(c.name, c.layer, c.weight, ok, text, severity, c.message, None)
            for ok, text in zip(verdicts.tolist(), table, strict=True)
        ]
        out: list[ConstraintResult] = results[index.reshape(-1)].tolist()
        return out

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
            out = self.first(f.operand, negated=True) < 0
        elif isinstance(f, A.Eventually) and f.bound is None:
            out = self.first(f.operand, negated=False) >= 0
        elif isinstance(f, A.Not):
            out = ~self.start(f.operand)
        elif isinstance(f, A.TracePredicate):
            out = self._predicate(f)[0]
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

    def first(self, f: A.Formula, *, negated: bool) -> S.Index:
        """Per row, the global index of the first position where ``f`` (or ``!f``) holds,
        or -1."""
        key = (id(f), negated)
        hit = self._firsts.get(key)
        if hit is None:
            hit = first_position(f, negated, self.tools, self.code_of)
            if hit is None:
                vec = self._vec(self.value(f))
                hit = S.first_true(~vec if negated else vec, self.seg)
            self._firsts[key] = hit
            self._pinned.append(f)
        return hit

    def _predicate(self, f: A.TracePredicate) -> Outcome:
        """A covered trace predicate's outcome on every row (``in_fragment`` let it in)."""
        hit = self._predicates.get(id(f))
        if hit is None:
            hit = predicate_outcome(f, self.tools, self.code_of)
            if hit is None:
                raise TypeError(f"outside the bulk fragment: {show(f)}")
            self._predicates[id(f)] = hit
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
            code = self.code_of(f.tool)
            mask = np.zeros(self.seg.n, dtype=bool) if code is None else self.code_vec == code
        if not f.tests and f.outcome is None:
            return mask
        expected = [(t, _operand(t)) for t in f.tests]
        calls = self._flat_calls()
        out = np.zeros(self.seg.n, dtype=bool)
        for i in np.flatnonzero(mask).tolist():
            call = calls[i]
            out[i] = (f.outcome is None or outcome_is(call, f.outcome)) and all(
                run_test(call_field(call, t.field.path), t, v) for t, v in expected
            )
        return out

    def _flat_calls(self) -> list[Call]:
        if self._calls is None:
            self._calls = [c for t in self.rows for c in self.traces[t].calls]
        return self._calls

    # ---------------------------------------------------------------- explanations
    def _explain(self, f: A.Formula, group: Rows, passed: BoolVec) -> Texts:
        """``explain(f, ev, passed)`` for the traces ``group`` (row numbers), in order.

        The same branches as :func:`agentguard.semantics.explain.explain`, restricted to
        the fragment and taken for a whole group of traces at once.
        """
        lengths = self.seg.lengths[group]
        if isinstance(f, A.TracePredicate):  # its own story, told for its own truth
            _, keys, told = self._predicate(f)
            return Texts.of(keys[group], lambda k: told(int(group[k])))
        if isinstance(f, A.Not) and isinstance(f.operand, A.TracePredicate):
            told_inner = self._explain(f.operand, group, ~passed)
            prefix = ("", "As required, not: ")
            return Texts.of(
                told_inner.index * 2 + passed,
                lambda k: prefix[int(passed[k])] + told_inner.table[told_inner.index[k]],
            )
        if isinstance(f, (A.Always, A.Eventually)) and f.bound is None:
            always = isinstance(f, A.Always)
            at = self.first(f.operand, negated=always)[group]
            local = at - self.seg.starts[group]
            inner = self._show(f.operand)

            def text(k: int) -> str:
                if bool(passed[k]) == always:  # held everywhere / never satisfied
                    n = int(lengths[k])
                    return (
                        f"Held at all {n} call(s)."
                        if always
                        else f"Never satisfied in {n} call(s): {inner}."
                    )
                at_k = int(local[k])
                call = f'call #{at_k + 1} ("{self.names[self.rows[int(group[k])]][at_k]}")'
                return (
                    f"Violated at {call}: {inner} does not hold there."
                    if always
                    else f"Satisfied at {call}."
                )

            # the text depends on the length (when held / never satisfied), else on the
            # position and its tool: one key per text, each text built once
            plain = passed == always
            where = np.where(plain, -1, local)
            tool = np.where(plain, lengths, self.code_vec[np.maximum(at, 0)])
            return Texts.of(where * self._base + tool, text)
        if isinstance(f, A.And):  # a failed conjunction is explained by its first failed part
            out = self._generic(f, passed, lengths)
            left = self.start(f.left)[group]
            right = self.start(f.right)[group]
            for part, pick in ((f.left, ~passed & ~left), (f.right, ~passed & left & ~right)):
                chosen = np.flatnonzero(pick)
                if chosen.size:
                    failed = np.zeros(chosen.size, dtype=bool)
                    out = out.overlay(chosen, self._explain(part, group[chosen], failed))
            return out
        if isinstance(f, A.Implies):
            left = self.start(f.left)[group]
            vacuous = f"Vacuously true: {self._show(f.left)} does not hold."
            out = Texts(np.zeros(group.size, dtype=np.int64), [vacuous])
            chosen = np.flatnonzero(left)
            if chosen.size:
                out = out.overlay(chosen, self._explain(f.right, group[chosen], passed[chosen]))
            return out
        return self._generic(f, passed, lengths)

    def _generic(self, f: A.Formula, passed: BoolVec, lengths: Rows) -> Texts:
        shown = self._show(f)

        def text(k: int) -> str:
            verdict = "holds" if passed[k] else "does not hold"
            return f"{shown} {verdict} on the {int(lengths[k])}-call trace."

        return Texts.of(lengths * 2 + passed, text)

    def _show(self, f: A.Formula) -> str:
        text = self._shown.get(id(f))
        if text is None:
            text = self._shown[id(f)] = show(f)
            self._pinned.append(f)
        return text


@dataclass(frozen=True, slots=True)
class Texts:
    """One text per row, as an index into a table of the distinct texts."""

    index: Rows
    table: list[str]

    @classmethod
    def of(cls, keys: Rows, text: Callable[[int], str]) -> Texts:
        """``text(k)`` for each row ``k``, where rows with equal keys have equal texts:
        each text is built once, for the first row with its key."""
        if not keys.size:
            return cls(np.zeros(0, dtype=np.int64), [])
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return cls(inverse.reshape(-1), [text(k) for k in first.tolist()])

    def overlay(self, rows: Rows, other: Texts) -> Texts:
        """These texts, with ``other``'s (one per row of ``rows``) in those rows."""
        index = self.index.copy()
        index[rows] = other.index + len(self.table)
        return Texts(index, [*self.table, *other.table])


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


def in_fragment(f: A.Formula, *, top: bool = True) -> bool:
    """Is ``f`` made of event atoms with constant tests, connectives and temporal
    operators, with covered trace predicates (:func:`covered`) where no temporal operator
    is above them (``top``: a predicate is the whole trace's, read at the start)?"""
    if isinstance(f, A.Const):
        return True
    if isinstance(f, A.Event):
        return all(_is_constant(t.value) for t in f.tests)
    if isinstance(f, A.TracePredicate):
        return top and covered(f)
    if isinstance(f, A.Not):
        return in_fragment(f.operand, top=top)
    if isinstance(f, UNARY):
        return in_fragment(f.operand, top=False)
    if isinstance(f, (A.And, A.Or, A.Implies, A.Iff)):
        return in_fragment(f.left, top=top) and in_fragment(f.right, top=top)
    if isinstance(f, BINARY):
        return in_fragment(f.left, top=False) and in_fragment(f.right, top=False)
    return False
