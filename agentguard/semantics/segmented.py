"""Temporal operators on many traces at once: boolean vectors cut into segments.

Traces laid end to end form one long vector; each operator is the same O(n) numpy scan
as in :mod:`agentguard.semantics.vectors`, with every look-ahead stopped at its trace's
last position and every look-back at its first. One scan then scores a whole corpus, so
the per-trace cost of Python dispatch over the formula disappears. On a single segment
every function here equals its counterpart in ``vectors``; a property test checks that.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from agentguard.language import ast as A
from agentguard.semantics.vectors import BoolVec, IntVec, as_vec, next_true, prev_true


class Segments:
    """The layout of non-empty traces laid end to end: where each one starts and ends."""

    __slots__ = ("arange", "ends", "first", "last", "lengths", "n", "starts", "stop")

    def __init__(self, lengths: Sequence[int]) -> None:
        sizes: IntVec = np.asarray(lengths, dtype=np.int64)
        if sizes.size and int(sizes.min()) <= 0:
            raise ValueError("segments must be non-empty")
        self.lengths = sizes
        self.ends: IntVec = np.cumsum(sizes)  # exclusive
        self.starts: IntVec = self.ends - sizes
        self.n = int(self.ends[-1]) if sizes.size else 0
        self.first: IntVec = np.repeat(self.starts, sizes)  # per position: its trace's start
        self.stop: IntVec = np.repeat(self.ends, sizes)  # per position: its trace's end
        self.last: IntVec = self.ends - 1
        self.arange: IntVec = np.arange(self.n, dtype=np.int64)


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


def first_true_in_segment(a: BoolVec, seg: Segments) -> npt.NDArray[np.int64]:
    """Per segment, the global index of its first true position, or -1 when it has none."""
    nxt = next_true(a)[seg.starts]
    out: npt.NDArray[np.int64] = np.where(nxt < seg.ends, nxt, -1)
    return out
