"""Per-trace indexes built once (O(n)) and shared by every constraint evaluated on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from agentguard.trace.model import Trace


class TraceIndex:
    """Tool-name codes, positions per tool and first occurrences of one trace."""

    __slots__ = ("_codes", "codes", "metrics", "n", "names", "positions", "trace")

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.n = len(trace)
        self.names = trace.names
        self.metrics: Mapping[str, Any] = trace.metrics
        self._codes: dict[str, int] = {}
        positions: dict[str, list[int]] = {}
        codes = np.empty(self.n, dtype=np.int64)
        for i, name in enumerate(self.names):
            code = self._codes.setdefault(name, len(self._codes))
            codes[i] = code
            positions.setdefault(name, []).append(i)
        self.codes: npt.NDArray[np.int64] = codes
        self.positions = positions

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
