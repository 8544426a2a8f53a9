"""A deliberately naive evaluator: the textbook recursive LTLf semantics, position by position.

Independent of agentguard's vectorised evaluator (no numpy, no shared helpers beyond
value comparison), so agreement between the two is evidence for both.
"""

from __future__ import annotations

from typing import Any

from agentguard.language import ast as A
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.values import (
    MISSING,
    call_field,
    compare,
    compile_regex,
    get_path,
    unwrap_result,
)
from agentguard.trace import Call, Trace


def ref_event(f: A.Event, call: Call, env: dict[str, Any]) -> bool:
    """One call against an event atom, test by test (no indexes, no vectors)."""
    if f.tool is not None and call.name != f.tool:
        return False
    for t in f.tests:
        actual = call_field(call, t.field.path)
        v = t.value
        if isinstance(v, A.Regex):
            expected: Any = compile_regex(v.pattern, v.flags)
        elif isinstance(v, A.Var):
            expected = get_path(env[v.name], v.path)
        elif isinstance(v, A.Literal):
            expected = v.value
        else:
            raise TypeError(type(v).__name__)
        ok = compare(actual, t.op, expected)
        if not ok and t.field.path == ("result",) and t.op not in ("!=", "!~"):
            inner = unwrap_result(actual)
            ok = inner is not MISSING and compare(inner, t.op, expected)
        if not ok:
            return False
    return True


def ref_holds(f: A.Formula, trace: Trace, i: int = 0, env: dict[str, Any] | None = None) -> bool:
    env = env or {}
    n = len(trace)
    r = lambda g, j=i, e=env: ref_holds(g, trace, j, e)  # noqa: E731
    if isinstance(f, A.Const):
        return f.value
    if isinstance(f, A.Not):
        return not r(f.operand)
    if isinstance(f, A.And):
        return r(f.left) and r(f.right)
    if isinstance(f, A.Or):
        return r(f.left) or r(f.right)
    if isinstance(f, A.Implies):
        return (not r(f.left)) or r(f.right)
    if isinstance(f, A.Iff):
        return r(f.left) == r(f.right)
    if isinstance(f, A.Next):
        return r(f.operand, i + 1) if i + 1 < n else not f.strong
    if isinstance(f, A.Yesterday):
        return r(f.operand, i - 1) if i >= 1 else not f.strong
    if isinstance(f, A.Eventually):
        hi = n - 1 if f.bound is None else min(n - 1, i + f.bound)
        return any(r(f.operand, j) for j in range(i, hi + 1))
    if isinstance(f, A.Always):
        hi = n - 1 if f.bound is None else min(n - 1, i + f.bound)
        return all(r(f.operand, j) for j in range(i, hi + 1))
    if isinstance(f, A.Once):
        lo = 0 if f.bound is None else max(0, i - f.bound)
        return i < n and any(r(f.operand, j) for j in range(lo, i + 1))
    if isinstance(f, A.Historically):
        lo = 0 if f.bound is None else max(0, i - f.bound)
        return i >= n or all(r(f.operand, j) for j in range(lo, i + 1))
    if isinstance(f, A.Until):
        return any(r(f.right, j) and all(r(f.left, k) for k in range(i, j)) for j in range(i, n))
    if isinstance(f, A.WeakUntil):
        return r(A.Until(f.left, f.right)) or all(r(f.left, j) for j in range(i, n))
    if isinstance(f, A.Release):
        return all(r(f.right, j) or any(r(f.left, k) for k in range(i, j)) for j in range(i, n))
    if isinstance(f, A.Since):
        return i < n and any(
            r(f.right, j) and all(r(f.left, k) for k in range(j + 1, i + 1)) for j in range(i + 1)
        )
    if isinstance(f, A.Quantified):
        ev = Evaluator(trace)  # domains only: extraction is specified separately
        values = ev.parametric_domain(f) if f.domain is None else ev.domain(f.domain, env)
        results = (ref_holds(f.body, trace, i, {**env, f.var: v}) for v in values)
        return all(results) if f.kind == "forall" else any(results)
    if isinstance(f, A.Event):
        return i < n and ref_event(f, trace[i], env)
    # atoms: position-local tests and global predicates, delegated (specified in their own tests)
    ev = Evaluator(trace)
    if n == 0:
        return ev.empty_value(f, env)
    return ev.holds(f, i, env)
