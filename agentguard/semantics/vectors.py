"""Temporal operators on boolean vectors: the truth of ``op φ`` at every position at once.

Each operator is one or two O(n) numpy scans (future operators scan backwards, past
operators forwards), so a formula costs O(n · |φ|) on an n-call trace.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_never

from agentguard.language import ast as A

BoolVec = npt.NDArray[np.bool_]
IntVec = npt.NDArray[np.int64]

UnaryTemporal: TypeAlias = A.Next | A.Yesterday | A.Eventually | A.Always | A.Once | A.Historically
BinaryTemporal: TypeAlias = A.Until | A.WeakUntil | A.Release | A.Since
UNARY = (A.Next, A.Yesterday, A.Eventually, A.Always, A.Once, A.Historically)
BINARY = (A.Until, A.WeakUntil, A.Release, A.Since)
TEMPORAL = UNARY + BINARY
"""Every temporal operator, future and past: the one list stages test formulas against."""


def as_vec(value: Any) -> BoolVec:
    """numpy's accumulate and comparisons are typed loosely; this pins the type for mypy."""
    return value  # type: ignore[no-any-return]


Value: TypeAlias = bool | BoolVec
"""A formula's truth at every position; a scalar means "the same at every position"."""

Connective: TypeAlias = A.And | A.Or | A.Implies | A.Iff


def connective(f: Connective, left: Value, right: Value, n: int) -> Value:
    """``left op right`` for a boolean connective, staying scalar while both sides are
    (the offline evaluator and the bulk scorer share this one definition)."""
    if isinstance(left, bool) and isinstance(right, bool):
        if isinstance(f, A.And):
            return left and right
        if isinstance(f, A.Or):
            return left or right
        if isinstance(f, A.Implies):
            return (not left) or right
        return left == right
    lv = np.full(n, left, dtype=bool) if isinstance(left, bool) else left
    rv = np.full(n, right, dtype=bool) if isinstance(right, bool) else right
    if isinstance(f, A.And):
        return lv & rv
    if isinstance(f, A.Or):
        return lv | rv
    if isinstance(f, A.Implies):
        return ~lv | rv
    return as_vec(lv == rv)


def next_true(a: BoolVec) -> IntVec:
    """For each i, the first j >= i with a[j], or n."""
    n = a.shape[0]
    idx = np.where(a, np.arange(n, dtype=np.int64), n)
    out: IntVec = np.minimum.accumulate(idx[::-1])[::-1]
    return out


def prev_true(a: BoolVec) -> IntVec:
    """For each i, the last j <= i with a[j], or -1."""
    n = a.shape[0]
    idx = np.where(a, np.arange(n, dtype=np.int64), -1)
    out: IntVec = np.maximum.accumulate(idx)
    return out


def until(left: BoolVec, right: BoolVec) -> BoolVec:
    n = left.shape[0]
    nxt_right = next_true(right)
    return as_vec((nxt_right < n) & (nxt_right <= next_true(~left)))


def unary(f: UnaryTemporal, a: BoolVec) -> BoolVec:
    """``f`` is X/N, Y/Z, F, G, O or H (bounded or not); ``a`` is its operand's vector."""
    n = a.shape[0]
    if isinstance(f, A.Next):
        out = np.empty(n, dtype=bool)
        out[:-1] = a[1:]
        out[-1] = not f.strong
        return out
    if isinstance(f, A.Yesterday):
        out = np.empty(n, dtype=bool)
        out[1:] = a[:-1]
        out[0] = not f.strong
        return out
    arange = np.arange(n, dtype=np.int64)
    if isinstance(f, A.Eventually):
        if f.bound is None:
            return as_vec(np.logical_or.accumulate(a[::-1])[::-1])
        nxt = next_true(a)
        return as_vec((nxt < n) & (nxt - arange <= f.bound))
    if isinstance(f, A.Always):
        if f.bound is None:
            return as_vec(np.logical_and.accumulate(a[::-1])[::-1])
        nxt_bad = next_true(~a)
        return as_vec((nxt_bad == n) | (nxt_bad - arange > f.bound))
    if isinstance(f, A.Once):
        if f.bound is None:
            return as_vec(np.logical_or.accumulate(a))
        prev = prev_true(a)
        return as_vec((prev >= 0) & (arange - prev <= f.bound))
    if isinstance(f, A.Historically):
        if f.bound is None:
            return as_vec(np.logical_and.accumulate(a))
        prev_bad = prev_true(~a)
        return as_vec((prev_bad < 0) | (arange - prev_bad > f.bound))
    assert_never(f)


def binary(f: BinaryTemporal, left: BoolVec, right: BoolVec) -> BoolVec:
    """``f`` is U, W, R or S; ``left`` and ``right`` are its operands' vectors."""
    if isinstance(f, A.Until):
        return until(left, right)
    if isinstance(f, A.WeakUntil):
        return as_vec(until(left, right) | (next_true(~left) == left.shape[0]))
    if isinstance(f, A.Release):  # φ R ψ ≡ ¬(¬φ U ¬ψ)
        return as_vec(~until(~left, ~right))
    if isinstance(f, A.Since):
        last_right = prev_true(right)
        return as_vec((last_right >= 0) & (prev_true(~left) <= last_right))
    assert_never(f)
