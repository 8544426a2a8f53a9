"""Evaluate one quantifier instance on a compressed timeline (stutter reduction).

An instance such as ``G(refund(order = "A7") -> O lookup(order = "A7"))`` has atoms that
hold at a handful of positions in a long trace. Between two positions where some atom
changes value, every atom is constant; operators that cannot count steps (boolean ones,
unbounded ``F G U W R O H S``) are invariant under repeating a letter, so the formula
has the same value at every position of such a segment, and its value at a segment's
start equals its value on the trace of segment starts. Evaluating on that short trace
makes an instance cost O(changes) instead of O(n).

Subformulas without the quantified variable are evaluated once on the full trace
(cached by the evaluator) and may use any operator; only the part that mentions the
variable must be step-free. Anything else falls back to the dense evaluation. Short
compressed traces are evaluated on Python lists, which beats numpy's per-call overhead.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.language.walk import children
from agentguard.semantics import vectors as V

Env: TypeAlias = Mapping[str, Any]


class Evaluator(Protocol):
    """What compressed evaluation needs from the dense evaluator that owns it.

    A protocol, so this module does not import ``evaluator`` (which builds a ``Compressed``):
    the two would otherwise import each other.
    """

    @property
    def n(self) -> int: ...

    def value(self, f: A.Formula, env: Env) -> bool | V.BoolVec: ...

    def event_hits(self, f: A.Event, env: Env) -> Sequence[int]: ...

    def pin(self, node: Any) -> None: ...

    def free_vars(self, f: Any) -> frozenset[str]: ...


IntVec = npt.NDArray[np.int64]
_SCALAR = (A.Compare, A.UserPredicate, A.TracePredicate, A.Const)
_LIST_LIMIT = 96  # compressed length up to which Python lists beat numpy


class Compressed:
    """Stutter-reduced evaluation of open formulas, sharing one evaluator's caches."""

    def __init__(self, ev: Evaluator) -> None:
        self.ev = ev
        self._safe: dict[int, bool] = {}
        self._changes: dict[int, list[int]] = {}

    def applies(self, f: A.Formula) -> bool:
        """Can ``f`` (with its free variables bound) be evaluated compressed?"""
        key = id(f)
        hit = self._safe.get(key)
        if hit is None:
            hit = self._is_safe(f)
            self._safe[key] = hit
            self.ev.pin(f)
        return hit

    def _is_safe(self, f: A.Formula) -> bool:
        if not self.ev.free_vars(f):
            return True
        if isinstance(f, (A.Event, A.Compare, A.UserPredicate, A.TracePredicate, A.Const)):
            return True
        if isinstance(f, A.Not):
            return self.applies(f.operand)
        if isinstance(f, (A.Eventually, A.Always, A.Once, A.Historically)):
            return f.bound is None and self.applies(f.operand)
        if isinstance(f, (A.And, A.Or, A.Implies, A.Iff, A.Until, A.WeakUntil, A.Release, A.Since)):
            return self.applies(f.left) and self.applies(f.right)
        if isinstance(f, (A.Next, A.Yesterday, A.Quantified)):
            return False  # they count steps, or nest a quantifier over the variable
        assert_never(f)

    def holds_at_start(
        self,
        f: A.Formula,
        env: Env,
        hits: Callable[[A.Event], Sequence[int] | None] | None = None,
    ) -> bool:
        """Truth of ``f`` at position 0 under ``env`` (``applies(f)`` must hold).

        ``hits`` may give an event atom's positions already known (None: look them up)."""
        n = self.ev.n
        events: dict[int, Sequence[int]] = {}
        points: set[int] = {0}
        self._collect(f, env, events, points, hits)
        starts = sorted(p for p in points if p < n)
        if len(starts) <= _LIST_LIMIT:
            value: Any = self._eval_list(f, env, starts, events)
        else:
            value = self._eval_array(f, env, np.asarray(starts, dtype=np.int64), events)
        return bool(value) if isinstance(value, bool) else bool(value[0])

    def _collect(
        self,
        f: A.Formula,
        env: Env,
        events: dict[int, Sequence[int]],
        points: set[int],
        known: Callable[[A.Event], Sequence[int] | None] | None,
    ) -> None:
        if not self.ev.free_vars(f):
            points.update(self._change_points(f))
            return
        if isinstance(f, A.Event):
            hits = known(f) if known is not None else None
            if hits is None:
                hits = self.ev.event_hits(f, env)
            events[id(f)] = hits
            points.update(hits)
            points.update(i + 1 for i in hits)
            return
        if isinstance(f, _SCALAR):
            return
        for child in children(f):
            self._collect(child, env, events, points, known)

    def _change_points(self, f: A.Formula) -> list[int]:
        key = id(f)
        hit = self._changes.get(key)
        if hit is None:
            value = self.ev.value(f, {})
            if isinstance(value, bool):
                hit = []
            else:
                hit = (np.flatnonzero(value[1:] != value[:-1]) + 1).tolist()
            self._changes[key] = hit
            self.ev.pin(f)
        return hit

    # ------------------------------------------------------------------ numpy
    def _eval_array(
        self, f: A.Formula, env: Env, starts: IntVec, events: dict[int, Sequence[int]]
    ) -> Any:
        if not self.ev.free_vars(f):
            value = self.ev.value(f, {})
            return value if isinstance(value, bool) else value[starts]
        if isinstance(f, A.Event):
            return np.isin(starts, np.asarray(events[id(f)], dtype=np.int64))
        if isinstance(f, _SCALAR):
            return self.ev.value(f, env)
        m = starts.shape[0]
        if isinstance(f, A.Not):
            v = self._eval_array(f.operand, env, starts, events)
            return (not v) if isinstance(v, bool) else ~v
        if isinstance(f, (A.Eventually, A.Always, A.Once, A.Historically)):
            v = self._eval_array(f.operand, env, starts, events)
            return V.unary(f, np.full(m, v, dtype=bool) if isinstance(v, bool) else v)
        if isinstance(f, (A.Next, A.Yesterday, A.Quantified)):
            raise TypeError(f"{type(f).__name__} is not step-free")  # applies() rules it out
        left = self._eval_array(f.left, env, starts, events)
        right = self._eval_array(f.right, env, starts, events)
        if isinstance(f, (A.And, A.Or, A.Implies, A.Iff)):
            out = V.connective(f, left, right, m)
            return np.full(m, out, dtype=bool) if isinstance(out, bool) else out
        lv = np.full(m, left, dtype=bool) if isinstance(left, bool) else left
        rv = np.full(m, right, dtype=bool) if isinstance(right, bool) else right
        if isinstance(f, (A.Until, A.WeakUntil, A.Release, A.Since)):
            return V.binary(f, lv, rv)
        assert_never(f)

    # ------------------------------------------------------------------ lists
    def _eval_list(
        self, f: A.Formula, env: Env, starts: list[int], events: dict[int, Sequence[int]]
    ) -> Any:
        m = len(starts)
        if not self.ev.free_vars(f):
            value = self.ev.value(f, {})
            return value if isinstance(value, bool) else [bool(value[i]) for i in starts]
        if isinstance(f, A.Event):
            hits = events[id(f)]
            return [_contains(hits, i) for i in starts]
        if isinstance(f, _SCALAR):
            return self.ev.value(f, env)
        if isinstance(f, A.Not):
            v = self._eval_list(f.operand, env, starts, events)
            return (not v) if isinstance(v, bool) else [not x for x in v]
        if isinstance(f, (A.Eventually, A.Always, A.Once, A.Historically)):
            v = self._eval_list(f.operand, env, starts, events)
            return _unary_list(f, [v] * m if isinstance(v, bool) else v)
        if isinstance(f, (A.Next, A.Yesterday, A.Quantified)):
            raise TypeError(f"{type(f).__name__} is not step-free")  # applies() rules it out
        left = self._eval_list(f.left, env, starts, events)
        right = self._eval_list(f.right, env, starts, events)
        lv = [left] * m if isinstance(left, bool) else left
        rv = [right] * m if isinstance(right, bool) else right
        if isinstance(f, A.And):
            return [a and b for a, b in zip(lv, rv, strict=True)]
        if isinstance(f, A.Or):
            return [a or b for a, b in zip(lv, rv, strict=True)]
        if isinstance(f, A.Implies):
            return [(not a) or b for a, b in zip(lv, rv, strict=True)]
        if isinstance(f, A.Iff):
            return [a == b for a, b in zip(lv, rv, strict=True)]
        if isinstance(f, (A.Until, A.WeakUntil, A.Release, A.Since)):
            return _binary_list(f, lv, rv)
        assert_never(f)


def _contains(sorted_hits: Sequence[int], i: int) -> bool:
    j = bisect_left(sorted_hits, i)
    return j < len(sorted_hits) and sorted_hits[j] == i


def _unary_list(f: A.Eventually | A.Always | A.Once | A.Historically, a: list[bool]) -> list[bool]:
    out = [False] * len(a)
    if isinstance(f, (A.Eventually, A.Always)):
        acc = isinstance(f, A.Always)
        for i in range(len(a) - 1, -1, -1):
            acc = (acc and a[i]) if isinstance(f, A.Always) else (acc or a[i])
            out[i] = acc
        return out
    if isinstance(f, (A.Once, A.Historically)):
        acc = isinstance(f, A.Historically)
        for i, x in enumerate(a):
            acc = (acc and x) if isinstance(f, A.Historically) else (acc or x)
            out[i] = acc
        return out
    assert_never(f)


def _binary_list(f: V.BinaryTemporal, left: list[bool], right: list[bool]) -> list[bool]:
    m = len(left)
    out = [False] * m
    if isinstance(f, A.Since):
        acc = False  # φ S ψ at i = ψ(i) or (φ(i) and (φ S ψ)(i-1))
        for i in range(m):
            acc = right[i] or (left[i] and acc)
            out[i] = acc
        return out
    if isinstance(f, A.Release):  # φ R ψ ≡ ¬(¬φ U ¬ψ)
        inner = _binary_list(
            A.Until(A.Const(True), A.Const(True)), [not x for x in left], [not x for x in right]
        )
        return [not x for x in inner]
    if isinstance(f, (A.Until, A.WeakUntil)):
        acc = isinstance(f, A.WeakUntil)  # beyond the end: U is false, W is true
        for i in range(m - 1, -1, -1):
            acc = right[i] or (left[i] and acc)
            out[i] = acc
        return out
    assert_never(f)
