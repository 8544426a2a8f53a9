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

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.language.walk import children
from agentguard.monitor.atoms import EventAtom, Unsupported, eval_event, term_value
from agentguard.semantics.predicates import values_match
from agentguard.trace.model import Call

Step = Callable[[list[bool], Call, int, list[Any], bool], bool]
"""One node's truth at position ``n``: ``(its children's values, call, n, state, pending)``;
a temporal node also moves its own slot of ``state`` to position ``n``."""


class PastFormula:
    """One past-time formula with its per-subformula memory of the previous position."""

    def __init__(self, formula: A.Formula) -> None:
        self.formula = formula
        self._steps: list[Step] = []
        self._build(formula)
        self.position = 0
        self._state: list[Any] = [None] * len(self._steps)

    def _build(self, f: A.Formula) -> int:
        """Number the subformulas children first; each gets the one step that evaluates it
        (the only dispatch over formula types: evaluation just runs the steps)."""
        kids = tuple(self._build(c) for c in children(f))
        i = len(self._steps)
        self._steps.append(_step(f, i, kids))
        return i

    def restarted(self) -> PastFormula:
        """This formula before any call, sharing its steps (closures over the formula
        that keep nothing: the memory is ``_state``), so a checker built from a cached
        plan (:class:`~agentguard.tools.checker.ToolPlan`) need not build them again."""
        new = object.__new__(PastFormula)
        new.formula = self.formula
        new._steps = self._steps
        new.position = 0
        new._state = [None] * len(self._steps)
        return new

    def _eval(self, call: Call, n: int, state: list[Any], *, pending: bool = False) -> bool:
        """Truth at position ``n`` (the call); ``state`` moves to position ``n``.

        A ``pending`` call (proposed, not run) has no outcome yet: ``.ok`` / ``.error``
        on it are not true."""
        vals: list[bool] = []
        for step in self._steps:
            vals.append(step(vals, call, n, state, pending))
        return vals[-1]

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


def _step(f: A.Formula, i: int, k: tuple[int, ...]) -> Step:
    """The step of node ``i`` (children at ``k``); raises Unsupported outside the fragment."""
    if isinstance(f, A.Const):
        value = f.value
        return lambda _vals, _call, _n, _state, _pending: value
    if isinstance(f, A.Event):
        for t in f.tests:
            term_value(t.value, {})  # raises Unsupported for variables, metrics, domains
        atom = EventAtom(f.tool, f.tests, outcome=f.outcome)
        return lambda _vals, call, _n, _state, pending: (
            eval_event(atom, call, {}, values_match, pending=pending) is True
        )
    if isinstance(f, A.Not):
        return lambda vals, _call, _n, _state, _pending: not vals[k[0]]
    if isinstance(f, A.And):
        return lambda vals, _call, _n, _state, _pending: vals[k[0]] and vals[k[1]]
    if isinstance(f, A.Or):
        return lambda vals, _call, _n, _state, _pending: vals[k[0]] or vals[k[1]]
    if isinstance(f, A.Implies):
        return lambda vals, _call, _n, _state, _pending: (not vals[k[0]]) or vals[k[1]]
    if isinstance(f, A.Iff):
        return lambda vals, _call, _n, _state, _pending: vals[k[0]] == vals[k[1]]
    if isinstance(f, A.Yesterday):
        strong = f.strong

        def yesterday(vals: list[bool], _call: Call, n: int, state: list[Any], _p: bool) -> bool:
            v = bool(state[i]) if n > 0 else not strong
            state[i] = vals[k[0]]
            return v

        return yesterday
    if isinstance(f, A.Since):

        def since(vals: list[bool], _call: Call, n: int, state: list[Any], _p: bool) -> bool:
            v = vals[k[1]] or (vals[k[0]] and n > 0 and bool(state[i]))
            state[i] = v
            return v

        return since
    if isinstance(f, A.Once | A.Historically):
        g = f
        return lambda vals, _call, n, state, _pending: _once_or_historically(
            g, vals[k[0]], n, state, i
        )
    if isinstance(
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
    assert_never(f)


def past_formula(formula: A.Formula) -> PastFormula | None:
    """The incremental evaluator of ``formula``, or None when it is outside the fragment."""
    try:
        return PastFormula(formula)
    except Unsupported:
        return None
