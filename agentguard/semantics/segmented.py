"""Temporal operators on many traces at once: boolean vectors cut into segments.

Traces laid end to end form one long vector; each operator is the same O(n) numpy scan
as in :mod:`agentguard.semantics.vectors`, with every look-ahead stopped at its trace's
last position and every look-back at its first. One scan then scores a whole corpus, so
the per-trace cost of Python dispatch over the formula disappears. On a single segment
every function here equals its counterpart in ``vectors``; a property test checks that.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from agentguard.language import ast as A
from agentguard.semantics.vectors import BoolVec, IntVec, as_vec, next_true, prev_true

Index = npt.NDArray[np.signedinteger[Any]]  # positions, 32-bit while they fit


class Segments:
    """The layout of non-empty traces laid end to end: where each one starts and ends.

    The per-position arrays are built on first use: a spec of unbounded operators only
    needs the compact ones (``arange1``, ``countdown``), 32-bit while positions fit.
    """

    def __init__(self, lengths: Sequence[int]) -> None:
        sizes: IntVec = np.asarray(lengths, dtype=np.int64)
        if sizes.size and int(sizes.min()) <= 0:
            raise ValueError("segments must be non-empty")
        self.lengths = sizes
        self.ends: IntVec = np.cumsum(sizes)  # exclusive
        self.starts: IntVec = self.ends - sizes
        self.n = int(self.ends[-1]) if sizes.size else 0
        self.last: IntVec = self.ends - 1
        self.index_type = np.int32 if self.n < 2**31 - 1 else np.int64

    @cached_property
    def first(self) -> IntVec:
        """Per position: its segment's start."""
        return np.repeat(self.starts, self.lengths)

    @cached_property
    def stop(self) -> IntVec:
        """Per position: its segment's end (exclusive)."""
        return np.repeat(self.ends, self.lengths)

    @cached_property
    def arange(self) -> IntVec:
        return np.arange(self.n, dtype=np.int64)

    @cached_property
    def arange1(self) -> Index:
        """``i + 1`` at position i, in the compact index type."""
        return np.arange(1, self.n + 1, dtype=self.index_type)

    @cached_property
    def countdown(self) -> Index:
        """``n - i`` at position i, in the compact index type."""
        return np.arange(self.n, 0, -1, dtype=self.index_type)

    def spread(self, per_segment: Index) -> Index:
        """A per-segment value repeated at every position of its segment."""
        out: Index = np.repeat(per_segment, self.lengths)
        return out


def last_true(a: BoolVec, seg: Segments) -> Index:
    """Per segment, the global index of its last true position, or -1 when it has none."""
    out: Index = np.maximum.reduceat(seg.arange1 * a, seg.starts) - 1
    return out


def first_true(a: BoolVec, seg: Segments) -> Index:
    """Per segment, the global index of its first true position, or -1 when it has none."""
    # (n - i) at true positions, 0 elsewhere: the segment's maximum picks its first true i
    top = np.maximum.reduceat(seg.countdown * a, seg.starts)
    out: Index = np.where(top > 0, seg.n - top, -1)
    return out


def until(left: BoolVec, right: BoolVec, seg: Segments) -> BoolVec:
    nxt_right = next_true(right)
    return as_vec((nxt_right < seg.stop) & (nxt_right <= next_true(~left)))


def unary(f: A.Formula, a: BoolVec, seg: Segments) -> BoolVec:
    """``f`` is X/N, Y/Z, F, G, O or H (bounded or not), within each segment."""
    if isinstance(f, A.Next):
        out = np.empty(seg.n, dtype=bool)
        out[:-1] = a[1:]
        out[seg.last] = not f.strong
        return out
    if isinstance(f, A.Yesterday):
        out = np.empty(seg.n, dtype=bool)
        out[1:] = a[:-1]
        out[seg.starts] = not f.strong
        return out
    if isinstance(f, (A.Eventually, A.Always, A.Once, A.Historically)) and f.bound is None:
        return _unbounded(f, a, seg)
    if isinstance(f, A.Eventually):
        nxt = next_true(a)
        inside = nxt < seg.stop
        return inside if f.bound is None else as_vec(inside & (nxt - seg.arange <= f.bound))
    if isinstance(f, A.Always):
        nxt_bad = next_true(~a)
        clear = nxt_bad >= seg.stop
        return clear if f.bound is None else as_vec(clear | (nxt_bad - seg.arange > f.bound))
    if isinstance(f, A.Once):
        prev = prev_true(a)
        inside = prev >= seg.first
        return inside if f.bound is None else as_vec(inside & (seg.arange - prev <= f.bound))
    if isinstance(f, A.Historically):
        prev_bad = prev_true(~a)
        clear = prev_bad < seg.first
        return clear if f.bound is None else as_vec(clear | (seg.arange - prev_bad > f.bound))
    raise TypeError(f"not a unary temporal operator: {type(f).__name__}")


def _unbounded(f: A.Formula, a: BoolVec, seg: Segments) -> BoolVec:
    """F, G, O, H without a bound: one reduction per segment, then a comparison.

    ``F a`` holds at i iff i is at or before its segment's last ``a``; ``O a`` iff at or
    after its first; ``G`` and ``H`` are the same on the complement.
    """
    position = seg.arange1  # i + 1, so the comparisons below are shifted by one
    if isinstance(f, A.Eventually):
        return as_vec(position <= seg.spread(last_true(a, seg) + 1))
    if isinstance(f, A.Always):
        return as_vec(position > seg.spread(last_true(~a, seg) + 1))
    if isinstance(f, A.Once):
        first = seg.spread(first_true(a, seg) + 1)
        return as_vec((first > 0) & (first <= position))
    first_bad = seg.spread(first_true(~a, seg) + 1)
    return as_vec((first_bad <= 0) | (position < first_bad))


def binary(f: A.Formula, left: BoolVec, right: BoolVec, seg: Segments) -> BoolVec:
    """``f`` is U, W, R or S, within each segment."""
    if isinstance(f, A.Until):
        return until(left, right, seg)
    if isinstance(f, A.WeakUntil):
        return as_vec(until(left, right, seg) | (next_true(~left) >= seg.stop))
    if isinstance(f, A.Release):  # φ R ψ ≡ ¬(¬φ U ¬ψ)
        return as_vec(~until(~left, ~right, seg))
    if isinstance(f, A.Since):
        last_right = prev_true(right)
        return as_vec((last_right >= seg.first) & (prev_true(~left) <= last_right))
    raise TypeError(f"not a binary temporal operator: {type(f).__name__}")
