"""Where each tool is called in a corpus laid end to end, and the DECLARE shapes answered
from those positions alone.

The bulk scorer (:mod:`agentguard.scoring.bulk`) asks, per trace, for the first position
where a constraint's body fails (``G φ``) or holds (``F φ``). For the shapes a DECLARE
model is made of, the answer follows from the sorted positions of one or two tools
and each trace's first and last call of them, in time proportional to those calls
(``searchsorted`` over the traces), with no vector over every position of the corpus:

    φ = a                   first a
    φ = a -> F b   (fails)  first a after the trace's last b             (response)
    φ = b -> O a   (fails)  first b, when it comes before the first a    (precedence)
    φ = a -> X b   (fails)  first a not directly followed by b           (chain response)
    φ = a -> N b   (fails)  the same, an a at the very end being fine

``a`` and ``b`` are plain event atoms (a tool name; no tests, no outcome). Any other
``φ`` is left to the vector evaluator (:func:`first_position` returns None).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from agentguard.language import ast as A
from agentguard.semantics.segmented import Index, Segments

Codes = npt.NDArray[np.signedinteger[Any]]


class Calls:
    """The calls of one tool: sorted global positions, and per trace (segment) the
    range ``lo:hi`` of them in ``positions`` and its first and last one (-1: none)."""

    def __init__(self, positions: Index, seg: Segments) -> None:
        self.positions = positions
        self.lo: Index = np.searchsorted(positions, seg.starts)
        # a trace's calls end where the next trace's begin
        self.hi: Index = np.append(self.lo[1:], positions.size)
        self._padded = np.append(positions, -1)  # index positions.size reads -1

    @cached_property
    def first(self) -> Index:
        out: Index = np.where(self.hi > self.lo, self._padded[self.lo], -1)
        return out

    @cached_property
    def last(self) -> Index:
        out: Index = np.where(self.hi > self.lo, self._padded[self.hi - 1], -1)
        return out


class ToolPositions:
    """Per tool code, its :class:`Calls` over the corpus.

    All tools' positions come from one stable sort of the codes (a radix sort while the
    codes fit 16 bits): sorting by tool keeps each tool's positions in order.
    """

    def __init__(self, codes: Codes, seg: Segments) -> None:
        self.codes = codes
        self.seg = seg
        self._calls: dict[int | None, Calls] = {}
        self._sorted: tuple[Index, Index] | None = None

    def of(self, code: int | None) -> Calls:
        """The calls of the tool with this code (None: a tool never called)."""
        hit = self._calls.get(code)
        if hit is None:
            order, bounds = self._by_tool()
            if code is None or code + 1 >= bounds.size:  # a tool these traces never call
                positions: Index = np.zeros(0, dtype=np.int64)
            else:
                positions = order[bounds[code] : bounds[code + 1]]
            hit = self._calls[code] = Calls(positions, self.seg)
        return hit

    def _by_tool(self) -> tuple[Index, Index]:
        """Positions sorted by tool, and where each tool's run starts."""
        if self._sorted is None:
            top = int(self.codes.max()) if self.codes.size else 0
            narrow = self.codes.astype(
                np.uint8 if top < 2**8 else np.uint16 if top < 2**16 else self.codes.dtype
            )
            order: Index = np.argsort(narrow, kind="stable")
            bounds: Index = np.concatenate(([0], np.cumsum(np.bincount(self.codes))))
            self._sorted = order, bounds
        return self._sorted


def plain_tool(f: A.Formula) -> str | None:
    """The tool of a plain event atom (a name, no tests, no outcome), else None."""
    if isinstance(f, A.Event) and f.tool is not None and not f.tests and f.outcome is None:
        return f.tool
    return None


def first_position(
    f: A.Formula, negated: bool, tools: ToolPositions, code_of: Callable[[str], int | None]
) -> Index | None:
    """Per trace, the global position of the first call where ``f`` holds (``negated``:
    fails), or -1; None when ``f`` is not one of the shapes above."""
    if not negated:
        tool = plain_tool(f)
        return None if tool is None else tools.of(code_of(tool)).first
    if not isinstance(f, A.Implies):
        return None
    trigger, body = plain_tool(f.left), f.right
    if trigger is None or not isinstance(body, (A.Eventually, A.Once, A.Next)):
        return None
    target = plain_tool(body.operand)
    if target is None:
        return None
    triggers = tools.of(code_of(trigger))
    if isinstance(body, A.Eventually) and body.bound is None:
        return _response(triggers, tools.of(code_of(target)), tools.seg)
    if isinstance(body, A.Once) and body.bound is None:
        return _precedence(triggers, tools.of(code_of(target)))
    if isinstance(body, A.Next):
        return _chain_response(triggers, code_of(target), body.strong, tools)
    return None  # a bounded F or O


def _response(a: Calls, b: Calls, seg: Segments) -> Index:
    """First ``a`` after the last ``b`` of its trace (every ``a`` when there is no ``b``)."""
    after = np.where(b.last >= 0, b.last + 1, seg.starts)
    k = np.searchsorted(a.positions, after)  # the first a at or after `after`
    out: Index = np.where(k < a.hi, a._padded[k], -1)
    return out


def _precedence(b: Calls, a: Calls) -> Index:
    """The first ``b`` of a trace when no ``a`` comes at or before it."""
    alone = (b.first >= 0) & ((a.first < 0) | (b.first < a.first))
    out: Index = np.where(alone, b.first, -1)
    return out


def _chain_response(a: Calls, b: int | None, strong: bool, tools: ToolPositions) -> Index:
    """The first ``a`` whose next call (in its trace) is not ``b``."""
    seg = tools.seg
    at = a.positions
    ends = seg.ends[np.searchsorted(seg.ends, at, side="right")]  # each a's trace end
    inside = at + 1 < ends
    following = tools.codes[np.minimum(at + 1, seg.n - 1)]
    good = inside & (following == b) if b is not None else np.zeros(at.size, dtype=bool)
    if not strong:
        good |= ~inside
    return Calls(at[~good], seg).first
