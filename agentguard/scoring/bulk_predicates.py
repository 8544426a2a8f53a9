"""The trace predicates a DECLARE-style mix is made of, on many traces at once.

``Called``, ``CalledN``, ``Before``, ``After`` and ``InOrder`` over constant tool names
depend only on where each tool is called: their truth per trace, and the position or
count their explanation names, follow from the sorted positions of their tools
(:class:`~agentguard.scoring.tool_positions.ToolPositions`) with ``searchsorted`` over
the traces, never a Python step per trace. The texts are those of
:func:`agentguard.semantics.predicates.explain`, built once per distinct outcome; a
property test holds every result to ``verify_trace``'s.

Any other predicate, or one whose arguments are not constants (a variable, a count that
is not an integer), is left to the per-trace evaluator (:func:`predicate_outcome` returns
None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from agentguard.language import ast as A
from agentguard.scoring.tool_positions import ToolPositions
from agentguard.semantics.segmented import Index

Verdicts = np.ndarray[Any, np.dtype[np.bool_]]
Keys = np.ndarray[Any, Any]
Outcome = tuple[Verdicts, Keys, Callable[[int], str]]
"""Per trace, its verdict and a key such that traces with equal keys have equal
explanations; and the explanation of one trace (by row)."""

_COUNT_OPS: Final[dict[str, Callable[[Any, Any], Verdicts]]] = {
    "=": np.equal,
    ">=": np.greater_equal,
    "<=": np.less_equal,
    ">": np.greater,
    "<": np.less,
}  # the operators of agentguard.semantics.predicates.COUNT_OPS, on arrays


def covered(f: A.Formula) -> bool:
    """Is ``f`` one of the predicates above with constant arguments (answered in bulk)?"""
    if not isinstance(f, A.TracePredicate):
        return False
    name, args = f.name, f.args
    if name == "Called":
        return _tool(args[0])
    if name == "CalledN":
        return _tool(args[0]) and _count(args[1]) and args[2] in _COUNT_OPS
    if name in ("Before", "After"):
        return _tool(args[0]) and _tool(args[1])
    if name == "InOrder":
        return isinstance(args[0], tuple) and all(map(_tool, args[0]))
    return False


def predicate_outcome(
    f: A.Formula, tools: ToolPositions, code_of: Callable[[str], int | None]
) -> Outcome | None:
    """The outcome of ``f`` on every trace, or None when ``f`` is not one of the
    predicates above with constant arguments."""
    if not isinstance(f, A.TracePredicate):
        return None
    name, args = f.name, f.args
    if name == "Called" and _tool(args[0]):
        return _called(args[0], _first(args[0], tools, code_of))
    if name == "CalledN" and _tool(args[0]) and _count(args[1]) and args[2] in _COUNT_OPS:
        calls = tools.of(code_of(args[0]))
        return _called_n(args[0], args[1], args[2], calls.hi - calls.lo)
    if name in ("Before", "After") and _tool(args[0]) and _tool(args[1]):
        a, b = (args[0], args[1]) if name == "Before" else (args[1], args[0])
        return _before(a, b, _first(a, tools, code_of), _first(b, tools, code_of))
    if name == "InOrder" and isinstance(args[0], tuple) and all(map(_tool, args[0])):
        return _in_order(args[0], tools, code_of)
    return None


def _tool(arg: Any) -> bool:
    return isinstance(arg, str)


def _count(arg: Any) -> bool:
    return isinstance(arg, int) and not isinstance(arg, bool)


def _q(t: str) -> str:
    return f'"{t}"'


def _first(tool: str, tools: ToolPositions, code_of: Callable[[str], int | None]) -> Index:
    """Per trace, the position in its trace of its first call of ``tool``, or -1."""
    first = tools.of(code_of(tool)).first
    out: Index = np.where(first >= 0, first - tools.seg.starts, -1)
    return out


def _called(tool: str, first: Index) -> Outcome:
    name = _q(tool)

    def text(k: int) -> str:
        at = int(first[k])
        return f"{name} was called (call #{at + 1})." if at >= 0 else f"{name} was never called."

    return first >= 0, first, text


def _called_n(tool: str, n: int, op: str, counts: Index) -> Outcome:
    def text(k: int) -> str:
        return f"{_q(tool)} called {int(counts[k])} time(s); expected {op} {n}."

    return _COUNT_OPS[op](counts, n), counts, text


def _before(a: str, b: str, ia: Index, ib: Index) -> Outcome:
    qa, qb = _q(a), _q(b)
    both_missing = f"Neither {qa} nor {qb} was called."
    b_missing = f"{qb} was never called ({qa} has no successor to precede)."
    a_missing = f"{qa} was never called (cannot precede {qb})."

    def text(k: int) -> str:  # one per distinct pair of positions: kept lean
        i, j = int(ia[k]), int(ib[k])
        if j < 0:
            return both_missing if i < 0 else b_missing
        if i < 0:
            return a_missing
        if i < j:
            return f"{qa} (call #{i + 1}) before {qb} (call #{j + 1})."
        return f"{qb} (call #{j + 1}) called before {qa} (call #{i + 1})."

    base = int(max(ia.max(initial=0), ib.max(initial=0))) + 2
    keys = (ia.astype(np.int64) + 1) * base + (ib + 1)
    return (ia >= 0) & (ib >= 0) & (ia < ib), keys, text


def _in_order(
    sequence: tuple[str, ...], tools: ToolPositions, code_of: Callable[[str], int | None]
) -> Outcome:
    """How many of ``sequence`` each trace calls as a subsequence, greedily from the
    left (``in_order_prefix``): each tool's first call after the previous one's."""
    seg = tools.seg
    found = np.zeros(seg.starts.size, dtype=np.int64)
    after = seg.starts.astype(np.int64)  # where the next tool is looked for
    alive = np.ones(seg.starts.size, dtype=bool)
    for tool in sequence:
        calls = tools.of(code_of(tool))
        k = np.searchsorted(calls.positions, after)
        hit = alive & (k < calls.hi)
        found += hit
        after = np.where(hit, calls._padded[np.minimum(k, calls.positions.size)] + 1, after)
        alive = hit

    def text(row: int) -> str:
        k = int(found[row])
        if k == len(sequence):
            return f"Sequence {list(sequence)} found as subsequence in trace."
        return (
            f"Sequence incomplete: found {list(sequence[:k])}, then {_q(sequence[k])} "
            "(and beyond) not found in order."
        )

    return found == len(sequence), found, text


__all__ = ["Outcome", "covered", "predicate_outcome"]
