"""A trace's tool sequence as integers: one process-wide code per tool name.

Bulk scoring needs every trace's tool sequence as integers; coding it is one dict
lookup per call, the one step of scoring a corpus that Python cannot vectorise. A trace
read from call records is coded once, when it is read (the reader already walks the
names to check them), so scoring the same traces again, or under several specs, does
not repeat it; :attr:`agentguard.trace.model.Trace.tool_codes` codes any other trace
on demand.

Codes come from one table per process (as ``sys.intern`` does for strings), so traces
coded apart can be laid end to end without re-coding. The table is bounded
(:data:`MAX_TOOLS` names): a trace naming a tool past that is left uncoded (None) and the
scorer codes it itself. Codes mean nothing in another process: a pickled
:class:`ToolCodes` carries the names and is coded again where it is loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

Codes = npt.NDArray[np.int32]

MAX_TOOLS: Final = 2**16
"""At most this many tool names get a code (so a hostile file cannot grow the table)."""

_CODES: dict[str, int] = {}
_LOCK = threading.Lock()


def tool_code(name: str) -> int | None:
    """The code of ``name``, None when no trace calling it was coded."""
    return _CODES.get(name)


@dataclass(frozen=True, slots=True)
class ToolCodes:
    """``codes[i]`` is the code of ``names[i]``, the tool called at position ``i``."""

    names: tuple[str, ...]
    codes: Codes

    @classmethod
    def of(cls, names: Sequence[str], distinct: Iterable[str] | None = None) -> ToolCodes | None:
        """The codes of ``names`` (``distinct``: its distinct names, when known, in any
        order), or None when the table is full and a name has no code. New names are
        coded in the order of their first call."""
        new = [n for n in (names if distinct is None else distinct) if n not in _CODES]
        if new:
            with _LOCK:
                for name in dict.fromkeys(n for n in names if n not in _CODES):
                    if name not in _CODES:
                        if len(_CODES) >= MAX_TOOLS:
                            return None
                        _CODES[name] = len(_CODES)
        codes = np.fromiter(map(_CODES.__getitem__, names), dtype=np.int32, count=len(names))
        return cls(tuple(names), codes)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ToolCodes.of, (self.names,))


__all__ = ["MAX_TOOLS", "ToolCodes", "tool_code"]
