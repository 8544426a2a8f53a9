"""Past-time ``requires`` formulas evaluated incrementally at the proposed call.

A tool's ``requires`` formula is past-time: its truth at the proposed call depends on the
calls so far, which would cost a pass over the whole prefix per proposal. Instead each
temporal subformula keeps its value at the previous position (Havelund and Roşu's
dynamic-programming monitor for past-time LTL): ``Y``/``Z`` the operand's last value,
``O``/``H``/``S`` their own, bounded ``O[<=k]``/``H[<=k]`` the last position where the
operand was true (false). A committed call updates them in O(|formula|); a proposal is
evaluated on a copy. Formulas outside this fragment (future operators, trace predicates,
comparisons, quantifiers, tests against variables or metrics) raise ``Unsupported`` and
are evaluated by the offline evaluator on the prefix instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.monitor.atoms import EventAtom, Unsupported, eval_event, term_value
from agentguard.semantics.predicates import values_match
from agentguard.trace.model import Call


class PastFormula:
    """One past-time formula with its per-subformula memory of the previous position."""

    def __init__(self, formula: A.Formula) -> None:
        self.formula = formula
        self._nodes: list[A.Formula] = []
        self._kids: list[tuple[int, ...]] = []
        self._events: dict[int, EventAtom] = {}
        self._build(formula)
        self.position = 0
        self._state: list[Any] = [None] * len(self._nodes)

    def _build(self, f: A.Formula) -> int:
        kids: tuple[int, ...] = ()
        if isinstance(f, A.Event):
            for t in f.tests:
                term_value(t.value, {})  # raises Unsupported for variables, metrics, domains
            self._events[len(self._nodes)] = EventAtom(f.tool, f.tests, outcome=f.outcome)
        elif isinstance(f, A.Const):
            pass
        elif isinstance(f, A.Not | A.Yesterday | A.Once | A.Historically):
            kids = (self._build(f.operand),)
        elif isinstance(f, A.And | A.Or | A.Implies | A.Iff | A.Since):
            kids = (self._build(f.left), self._build(f.right))
        elif isinstance(
            f,
            A.Compare
            | A.Next
            | A.Eventually
            | A.Always
            | A.Until
            | A.WeakUntil
            | A.Release
            | A.Quantified
            | A.TracePredicate
            | A.UserPredicate,
        ):
            raise Unsupported(f"{type(f).__name__} in a precondition")
        else:
            assert_never(f)
        self._nodes.append(f)
        self._kids.append(kids)
        return len(self._nodes) - 1

    def _eval(self, call: Call, n: int, state: list[Any], *, pending: bool = False) -> bool:
        """Truth at position ``n`` (the call); ``state`` moves to position ``n``.

        A ``pending`` call (proposed, not run) has no outcome yet: ``.ok`` / ``.error``
        on it are not true."""
        vals: list[bool] = []
        for i, f in enumerate(self._nodes):
            k = self._kids[i]
            if isinstance(f, A.Const):
                v = f.value
            elif isinstance(f, A.Event):
                v = eval_event(self._events[i], call, {}, values_match, pending=pending) is True
            elif isinstance(f, A.Not):
                v = not vals[k[0]]
            elif isinstance(f, A.And):
                v = vals[k[0]] and vals[k[1]]
            elif isinstance(f, A.Or):
                v = vals[k[0]] or vals[k[1]]
            elif isinstance(f, A.Implies):
                v = (not vals[k[0]]) or vals[k[1]]
            elif isinstance(f, A.Iff):
                v = vals[k[0]] == vals[k[1]]
            elif isinstance(f, A.Yesterday):
                v = bool(state[i]) if n > 0 else not f.strong
                state[i] = vals[k[0]]
            elif isinstance(f, A.Since):
                v = vals[k[1]] or (vals[k[0]] and n > 0 and bool(state[i]))
                state[i] = v
            elif isinstance(f, A.Once | A.Historically):
                v = self._once_or_historically(f, vals[k[0]], n, state, i)
            elif isinstance(
                f,
                A.Compare
                | A.Next
                | A.Eventually
                | A.Always
                | A.Until
                | A.WeakUntil
                | A.Release
                | A.Quantified
                | A.TracePredicate
                | A.UserPredicate,
            ):  # pragma: no cover - _build admits none of these
                raise Unsupported(type(f).__name__)
            else:
                assert_never(f)
            vals.append(v)
        return vals[-1]

    @staticmethod
    def _once_or_historically(
        f: A.Once | A.Historically, operand: bool, n: int, state: list[Any], i: int
    ) -> bool:
        once = isinstance(f, A.Once)
        if f.bound is None:
            prev = bool(state[i]) if n > 0 else not once
            v = (operand or prev) if once else (operand and prev)
            state[i] = v
            return v
        # the last position where the operand was true (O) / false (H)
        last = n if operand == once else state[i]
        state[i] = last
        within = last is not None and n - last <= max(f.bound, 0)
        return within if once else not within

    def advance(self, call: Call) -> None:
        """Commit a call (it becomes the previous position)."""
        self._eval(call, self.position, self._state)
        self.position += 1

    def holds_at(self, calls: Sequence[Call]) -> bool:
        """Truth at the last of ``calls`` appended to the committed ones (nothing committed)."""
        state = list(self._state)
        n = self.position
        value = True
        for call in calls:
            value = self._eval(call, n, state, pending=True)
            n += 1
        return value


def past_formula(formula: A.Formula) -> PastFormula | None:
    """The incremental evaluator of ``formula``, or None when it is outside the fragment."""
    try:
        return PastFormula(formula)
    except Unsupported:
        return None
