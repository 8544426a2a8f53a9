"""A trace's tool sequence, dictionary-coded: its distinct tool names and, per position,
the number of its name.

Bulk scoring needs every trace's tool sequence as integers; coding it is one dict
lookup per call, the one step of scoring a corpus that Python cannot vectorise. A trace
read from call records is coded once, when it is read (the reader already walks the
names to check them), so scoring the same traces again, or under several specs, does
not repeat it; :attr:`agentguard.trace.model.Trace.tool_codes` codes any other trace
on demand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Codes = npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class ToolCodes:
    """``vocab[codes[i]]`` is the tool called at position ``i``; ``vocab`` lists each
    name once, in the order of its first call."""

    vocab: tuple[str, ...]
    codes: Codes

    @classmethod
    def of(cls, names: Sequence[str]) -> ToolCodes:
        lookup: dict[str, int] = {n: i for i, n in enumerate(dict.fromkeys(names))}
        return cls.from_lookup(names, lookup)

    @classmethod
    def from_lookup(cls, names: Sequence[str], lookup: dict[str, Any]) -> ToolCodes:
        """The codes of ``names`` given ``lookup``, a dict of their distinct names in
        order of first call (its values are replaced by the codes)."""
        for code, name in enumerate(lookup):
            lookup[name] = code
        codes = np.fromiter(map(lookup.__getitem__, names), dtype=np.int32, count=len(names))
        return cls(tuple(lookup), codes)


__all__ = ["ToolCodes"]
