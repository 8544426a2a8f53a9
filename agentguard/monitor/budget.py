"""Budgets decided online: ``metrics.num_tool_calls`` compared with a constant.

The metrics record is known only when the run ends, but the number of calls can only
grow: once the count exceeds 40, ``metrics.num_tool_calls <= 40`` is false whatever
happens next, and once it reaches 3, ``metrics.num_tool_calls >= 3`` is true. A machine
state is *viewed* with the atoms that the count already decides replaced by their
values; the stepped state itself keeps them symbolic, so ``finish(metrics)`` still
resolves them with the real metrics record, exactly as offline.

The online count is the number of calls stepped, minus calls to ``uncounted`` tools
(the firewall passes its ``final_tools``: a final answer is not a tool call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from agentguard.language import ast as A
from agentguard.monitor.atoms import Atom, FrozenAtom
from agentguard.semantics.values import compare

COUNT_PATH: Final = ("num_tool_calls",)
_MIRROR: Final = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}

Known = tuple[tuple[int, bool], ...]
"""Values of the budget atoms decided so far: (atom index, value) pairs."""


@dataclass(frozen=True, slots=True)
class CountTest:
    """``count op limit`` for one frozen atom of a machine."""

    atom: int
    op: str
    limit: int | float

    def known(self, count: int) -> bool | None:
        """The value every run extending ``count`` calls gives it (None: not decided yet)."""
        op, k = self.op, self.limit
        if op in ("<=", "="):
            return False if count > k else None
        if op == "<":
            return False if count >= k else None
        if op == ">=":
            return True if count >= k else None
        if op in (">", "!="):
            return True if count > k else None
        return None  # pragma: no cover - only the ops of _MIRROR are built

    def exact(self, count: int) -> bool:
        """The value if the run ends with ``count`` calls (the metrics record agreeing)."""
        return compare(count, self.op, self.limit)


def count_test(index: int, atom: Atom) -> CountTest | None:
    """The budget test of an atom, or None when it is not ``num_tool_calls op number``."""
    if not isinstance(atom, FrozenAtom) or not atom.metric:
        return None
    f = atom.formula
    if not isinstance(f, A.Compare) or f.op not in _MIRROR:
        return None
    if _is_count(f.left) and _is_number(f.right):
        return CountTest(index, f.op, _number(f.right))
    if _is_count(f.right) and _is_number(f.left):
        return CountTest(index, _MIRROR[f.op], _number(f.left))
    return None


def count_tests(atoms: Sequence[Atom]) -> tuple[CountTest, ...]:
    """Every budget test among a machine's atoms."""
    found = (count_test(i, a) for i, a in enumerate(atoms))
    return tuple(t for t in found if t is not None)


def known(tests: Sequence[CountTest], count: int, *, ending: bool = False) -> Known:
    """The values ``count`` decides; ``ending``: the run ends with exactly ``count`` calls."""
    if ending:
        return tuple((t.atom, t.exact(count)) for t in tests)
    out = []
    for t in tests:
        v = t.known(count)
        if v is not None:
            out.append((t.atom, v))
    return tuple(out)


def _is_count(t: A.Term) -> bool:
    return isinstance(t, A.MetricRef) and tuple(t.path) == COUNT_PATH


def _is_number(t: A.Term) -> bool:
    return (
        isinstance(t, A.Literal)
        and isinstance(t.value, (int, float))
        and not isinstance(t.value, bool)
    )


def _number(t: A.Term) -> int | float:
    value = t.value if isinstance(t, A.Literal) else 0
    return value if isinstance(value, (int, float)) else 0


def hint(tests: Sequence[CountTest], count: int, *, ending: bool) -> str:
    """What would keep the budgets, with ``count`` calls made (the proposed one included)."""
    for t in tests:
        if ending:
            if t.exact(count):
                continue
            more = _more_needed(t, count)
            if more > 0:
                return f"make {more} more tool call{'s' * (more != 1)} before finishing"
        elif t.known(count) is False:
            return (
                f"make no further tool calls: the budget is metrics.num_tool_calls "
                f"{t.op} {t.limit:g} and this would be call {count}"
            )
    return ""


def _more_needed(t: CountTest, count: int) -> int:
    """The fewest extra calls after which ending satisfies ``t`` (0: none will)."""
    return next((k for k in range(1, 1001) if t.exact(count + k)), 0)
