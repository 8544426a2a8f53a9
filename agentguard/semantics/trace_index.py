"""Per-trace indexes built once (O(n)) and shared by every constraint evaluated on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from agentguard.trace.model import Trace

_SORTED_FROM = 256
"""Calls from which the index is built from the tool codes by sorting (below, a Python
loop over the calls costs less than numpy's calls)."""


class TraceIndex:
    """Tool-name codes, positions per tool and first occurrences of one trace."""

    __slots__ = ("_codes", "codes", "metrics", "n", "names", "positions", "trace")

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.n = len(trace)
        self.names = trace.names
        self.metrics: Mapping[str, Any] = trace.metrics
        self._codes: dict[str, int] = {}
        self.positions: dict[str, list[int]] = {}
        self.codes: npt.NDArray[np.int64]
        coded = trace.tool_codes if self.n >= _SORTED_FROM else None
        if coded is not None:
            self.codes = self._from_codes(coded.codes)
            return
        codes = np.empty(self.n, dtype=np.int64)
        for i, name in enumerate(self.names):
            code = self._codes.setdefault(name, len(self._codes))
            codes[i] = code
            self.positions.setdefault(name, []).append(i)
        self.codes = codes

    def _from_codes(self, coded: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
        """The index from the trace's process-wide tool codes, by sorting instead of a
        Python step per call; the same codes (in order of first call) and positions."""
        table, first, inverse = np.unique(coded, return_index=True, return_inverse=True)
        by_first = np.argsort(first, kind="stable")  # the tools, in order of first call
        local = np.empty(table.size, dtype=np.int64)
        local[by_first] = np.arange(table.size)
        codes: npt.NDArray[np.int64] = local[inverse.reshape(-1)]
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(np.bincount(codes, minlength=table.size))[:-1]
        runs = np.split(order, bounds)
        for code, at in enumerate(first[by_first].tolist()):
            name = self.names[at]
            self._codes[name] = code
            self.positions[name] = runs[code].tolist()
        return codes

    def mask(self, tool: str) -> npt.NDArray[np.bool_]:
        """Positions whose call is ``tool``."""
        code = self._codes.get(tool)
        if code is None:
            return np.zeros(self.n, dtype=bool)
        out: npt.NDArray[np.bool_] = self.codes == code
        return out

    def first(self, tool: str) -> int | None:
        """``first(t)``, or None for ⊥."""
        pos = self.positions.get(tool)
        return pos[0] if pos else None

    def nth(self, tool: str, k: int) -> int | None:
        """``nth(t, k)`` (0-based), or None for ⊥."""
        pos = self.positions.get(tool, [])
        return pos[k] if 0 <= k < len(pos) else None

    def first_after(self, tool: str, i: int) -> int | None:
        """``first_after(t, i)``: the first occurrence at or after i, or None."""
        import bisect

        pos = self.positions.get(tool, [])
        j = bisect.bisect_left(pos, i)
        return pos[j] if j < len(pos) else None

    def count(self, tool: str) -> int:
        return len(self.positions.get(tool, ()))
