"""Human details for a constraint's outcome, in the style of the paper's report."""

from __future__ import annotations

import numpy as np
from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.language.printer import formula as show
from agentguard.language.printer import term as show_term
from agentguard.semantics import predicates as P
from agentguard.semantics.evaluator import Env, Evaluator
from agentguard.semantics.vectors import TEMPORAL


def _call(ev: Evaluator, i: int) -> str:
    return f'call #{i + 1} ("{ev.idx.names[i]}")'


def explain(f: A.Formula, ev: Evaluator, passed: bool, env: Env | None = None) -> str:
    """Why ``f`` holds or fails at position 0 of the evaluator's trace."""
    env = env or {}
    n = ev.n
    if isinstance(f, A.TracePredicate):
        resolve = ev.resolver(env)
        return P.explain(P.ground(f, resolve), ev.idx, resolve, ev.match, passed)
    if isinstance(f, A.Compare):
        left = ev.term(f.left, env)
        return f"{show_term(f.left)} = {left!r}; expected {f.op} {show_term(f.right)}."
    if isinstance(f, A.Not) and isinstance(f.operand, A.TracePredicate):
        inner = explain(f.operand, ev, not passed, env)
        return inner if not passed else f"As required, not: {inner}"
    if n == 0:
        return f"Empty trace: {show(f)} {'holds' if passed else 'does not hold'}."
    if isinstance(f, A.Always) and f.bound is None:
        if passed:
            return f"Held at all {n} call(s)."
        bad = np.flatnonzero(~ev.vector(f.operand, env))
        return f"Violated at {_call(ev, int(bad[0]))}: {show(f.operand)} does not hold there."
    if isinstance(f, A.Eventually) and f.bound is None:
        if passed:
            good = np.flatnonzero(ev.vector(f.operand, env))
            return f"Satisfied at {_call(ev, int(good[0]))}."
        return f"Never satisfied in {n} call(s): {show(f.operand)}."
    if isinstance(f, A.Quantified):
        values = ev.parametric_domain(f) if f.domain is None else ev.domain(f.domain, env)
        if not values:
            truth = "true" if f.kind == "forall" else "false"
            return f"Empty domain: {f.kind} is vacuously {truth}."
        decisive = ev.decisive_value(f, 0, env)
        if decisive is None:
            if f.kind == "forall":
                return f"Holds for all {len(values)} value(s) of {f.var}."
            return f"No value of {f.var} among {len(values)} satisfies the body."
        bound = {**env, f.var: decisive[0]}
        if f.kind == "forall":
            return f"Fails for {f.var} = {decisive[0]!r}: {explain(f.body, ev, False, bound)}"
        return f"Holds for {f.var} = {decisive[0]!r}: {explain(f.body, ev, True, bound)}"
    if isinstance(f, A.And) and not passed:
        for part in (f.left, f.right):
            if not ev.holds(part, 0, env):
                return explain(part, ev, False, env)
    if isinstance(f, A.Implies):
        if not ev.holds(f.left, 0, env):
            return f"Vacuously true: {show(f.left)} does not hold."
        return explain(f.right, ev, passed, env)
    # no specific story: say what held (a new operator must be placed here or above)
    if isinstance(f, (TEMPORAL, A.Const, A.Event, A.Not, A.And, A.Or, A.Iff, A.UserPredicate)):
        return f"{show(f)} {'holds' if passed else 'does not hold'} on the {n}-call trace."
    assert_never(f)
