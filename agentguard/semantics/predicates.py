"""The Appendix A.2.2 trace predicates: exact meaning and a human explanation.

All are global over the whole trace; an undefined (``⊥``) operand makes them false.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from agentguard.language import ast as A
from agentguard.semantics.trace_index import TraceIndex
from agentguard.semantics.values import is_submapping, values_equal

COUNT_OPS: Mapping[str, Callable[[int, int], bool]] = {
    "=": operator.eq,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}

Resolve = Callable[[A.Term], Any]
"""Turns a term (possibly with variables) into a plain value."""
Match = Callable[[Any, Any], bool]


class NotATool:
    """A tool position bound to a value that is not a string: no call has that name."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)

    __str__ = __repr__


def _tool(value: Any) -> Any:
    return value if isinstance(value, str) else NotATool(value)


def ground(pred: A.TracePredicate, resolve: Resolve) -> A.TracePredicate:
    """``pred`` with the variables in its tool positions replaced by their values.

    ``exists x in tools: Before(a, x)`` is the disjunction of ``Before(a, v)`` over the
    domain (Appendix A.2.4's substitution), so each instance names concrete tools.
    """
    kinds = A.TRACE_PREDICATES[pred.name].split()
    args: list[Any] = []
    changed = False
    for kind, arg in zip(kinds, pred.args, strict=False):
        if kind == "t" and isinstance(arg, A.Var):
            args.append(_tool(resolve(arg)))
            changed = True
        elif kind == "[t]" and any(isinstance(t, A.Var) for t in arg):
            args.append(tuple(_tool(resolve(t)) if isinstance(t, A.Var) else t for t in arg))
            changed = True
        else:
            args.append(arg)
    return A.TracePredicate(pred.name, tuple(args), pred.span) if changed else pred


def _lt(a: int | None, b: int | None) -> bool:
    return a is not None and b is not None and a < b


def in_order_prefix(idx: TraceIndex, tools: tuple[str, ...]) -> int:
    """How many of ``tools`` are found as a subsequence, greedily from the left."""
    k = 0
    for name in idx.names:
        if k < len(tools) and name == tools[k]:
            k += 1
            if k == len(tools):
                break
    return k


def within_steps_distance(idx: TraceIndex, t1: str, t2: str) -> int | None:
    a = idx.first(t1)
    if a is None:
        return None
    b = idx.first_after(t2, a)
    return None if b is None else b - a


def matching_call(
    idx: TraceIndex, tool: str, expected: Mapping[str, Any], result: Any, match: Match | None
) -> int | None:
    """First position of ``tool`` whose args contain ``expected`` (and whose result matches)."""
    for i in idx.positions.get(tool, ()):
        call = idx.trace.calls[i]
        if not is_submapping(expected, call.args):
            continue
        if match is None or (call.has_result and match(call.result, result)):
            return i
    return None


def evaluate(
    pred: A.TracePredicate,
    idx: TraceIndex,
    resolve: Resolve,
    match: Match,
    context: Callable[[str], bool],
) -> bool:
    """The truth value of ``pred`` on the whole trace."""
    name, args = pred.name, pred.args
    if name == "Called":
        return idx.count(args[0]) > 0
    if name == "CalledN":
        return COUNT_OPS[args[2]](idx.count(args[0]), args[1])
    if name == "Before":
        return _lt(idx.first(args[0]), idx.first(args[1]))
    if name == "After":
        return _lt(idx.first(args[1]), idx.first(args[0]))
    if name == "AllBefore":
        # ∀t∈T. first(t) < first(g): vacuously true for T = [] even if g never ran
        g = idx.first(args[1])
        return all(_lt(idx.first(t), g) for t in args[0])
    if name == "InstanceBefore":
        return _lt(idx.nth(args[0], args[1]), idx.nth(args[2], args[3]))
    if name == "InOrder":
        return in_order_prefix(idx, args[0]) == len(args[0])
    if name == "WithinSteps":
        d = within_steps_distance(idx, args[0], args[1])
        return d is not None and d <= args[2]
    if name == "CalledWith":
        return matching_call(idx, args[0], resolve(args[1]), None, None) is not None
    if name == "CalledWithResult":
        expected = resolve(args[2]) if len(args) > 2 else {}
        return matching_call(idx, args[0], expected, resolve(args[1]), match) is not None
    if name == "BranchCalled":
        return idx.count(args[0]) > 0 and idx.count(args[1]) == 0
    if name == "Predicate":
        return context(args[0])
    raise ValueError(
        f"unknown trace predicate {name}"
    )  # pragma: no cover - the resolver rejects it


def _q(t: str) -> str:
    return f'"{t}"'


def _at(i: int | None) -> str:
    return f"call #{i + 1}" if i is not None else "never"


def explain(
    pred: A.TracePredicate, idx: TraceIndex, resolve: Resolve, match: Match, passed: bool
) -> str:
    """A human detail in the style of the paper's Appendix B report."""
    name, args = pred.name, pred.args
    if name == "Called":
        i = idx.first(args[0])
        return (
            f"{_q(args[0])} was called ({_at(i)})."
            if i is not None
            else f"{_q(args[0])} was never called."
        )
    if name == "CalledN":
        return f"{_q(args[0])} called {idx.count(args[0])} time(s); expected {args[2]} {args[1]}."
    if name in ("Before", "After"):
        a, b = (args[0], args[1]) if name == "Before" else (args[1], args[0])
        ia, ib = idx.first(a), idx.first(b)
        if ia is None and ib is None:
            return f"Neither {_q(a)} nor {_q(b)} was called."
        if ib is None:
            return f"{_q(b)} was never called ({_q(a)} has no successor to precede)."
        if ia is None:
            return f"{_q(a)} was never called (cannot precede {_q(b)})."
        if ia < ib:
            return f"{_q(a)} ({_at(ia)}) before {_q(b)} ({_at(ib)})."
        return f"{_q(b)} ({_at(ib)}) called before {_q(a)} ({_at(ia)})."
    if name == "AllBefore":
        g = idx.first(args[1])
        if not args[0]:
            return f"No tools listed: AllBefore([], {_q(args[1])}) holds vacuously."
        if g is None:
            return f"{_q(args[1])} was never called."
        bad = [
            f"{_q(t)} not called"
            if idx.first(t) is None
            else f"{_q(t)} ({_at(idx.first(t))}) not before {_q(args[1])} ({_at(g)})"
            for t in args[0]
            if not _lt(idx.first(t), g)
        ]
        if not bad:
            return f"All {len(args[0])} tools completed before {_q(args[1])} ({_at(g)})."
        return f"Gate violation for {_q(args[1])}: {'; '.join(bad)}."
    if name == "InstanceBefore":
        t1, n, t2, m = args
        a, b = idx.nth(t1, n), idx.nth(t2, m)
        if a is None:
            return f"{_q(t1)} has only {idx.count(t1)} occurrence(s); need at least {n + 1}."
        if b is None:
            return f"{_q(t2)} has only {idx.count(t2)} occurrence(s); need at least {m + 1}."
        if a < b:
            return f"{_q(t1)}[{n}] ({_at(a)}) before {_q(t2)}[{m}] ({_at(b)})."
        return f"{_q(t2)}[{m}] ({_at(b)}) is not after {_q(t1)}[{n}] ({_at(a)})."
    if name == "InOrder":
        k = in_order_prefix(idx, args[0])
        if k == len(args[0]):
            return f"Sequence {list(args[0])} found as subsequence in trace."
        return f"Sequence incomplete: found {list(args[0][:k])}, then {_q(args[0][k])} (and beyond) not found in order."
    if name == "WithinSteps":
        a = idx.first(args[0])
        if a is None:
            return f"{_q(args[0])} was never called."
        d = within_steps_distance(idx, args[0], args[1])
        if d is None:
            return f"{_q(args[1])} never occurred after {_q(args[0])} ({_at(a)})."
        verdict = f"within {args[2]}" if d <= args[2] else f"exceeds limit of {args[2]}"
        return f"{_q(args[1])} ({_at(a + d)}) occurs {d} step(s) after {_q(args[0])} ({_at(a)}) — {verdict}."
    if name in ("CalledWith", "CalledWithResult"):
        tool = args[0]
        if idx.count(tool) == 0:
            return f"{_q(tool)} was never called."
        expected = (
            resolve(args[1])
            if name == "CalledWith"
            else (resolve(args[2]) if len(args) > 2 else {})
        )
        if name == "CalledWith":
            i = matching_call(idx, tool, expected, None, None)
            if i is not None:
                return f"{_q(tool)} called with {expected} ({_at(i)})."
            return f"{_q(tool)} was called but not with the expected arguments {expected}."
        result = resolve(args[1])
        i = matching_call(idx, tool, expected, result, match)
        if i is not None:
            return f"{_q(tool)} returned the expected result ({_at(i)})."
        return f"{_q(tool)} called {idx.count(tool)} time(s) but no call returned the expected result {result!r}."
    if name == "BranchCalled":
        plus, minus = args
        ip, im = idx.first(plus), idx.first(minus)
        if ip is not None and im is None:
            return f"{_q(plus)} correctly called ({_at(ip)})."
        if ip is not None:
            return f"Both {_q(plus)} ({_at(ip)}) and wrong tool {_q(minus)} ({_at(im)}) were called — both branches triggered."
        if im is not None:
            return f"{_q(minus)} called instead of {_q(plus)} — wrong branch."
        return f"Neither {_q(plus)} nor {_q(minus)} was called."
    if name == "Predicate":
        return f"Predicate {args[0]} returned {passed}."
    return f"{name} {'holds' if passed else 'does not hold'}."  # pragma: no cover


def values_match(a: Any, b: Any) -> bool:
    """The default ``match``: structural equality, also against a ``{"result": v}`` wrapper."""
    if values_equal(a, b):
        return True
    from agentguard.semantics.values import unwrap_result

    inner = unwrap_result(a)
    return values_equal(inner, b)
