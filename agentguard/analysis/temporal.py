"""Temporal findings: unsatisfiable, valid, conflicting, never blocking, late constraints.

Each constraint is compiled exactly as the monitor compiles it (:func:`compile_plan`), and
its automaton explored by :mod:`agentguard.analysis.search`. Findings are claimed only
when proven on the abstraction, which has more runs than reality: a clean result never
hides a proven problem, and a warning is never a guess.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce

from agentguard.analysis import search
from agentguard.analysis.findings import LintWarning, located
from agentguard.analysis.search import Exploration, accepting_paths, explore
from agentguard.language import ast as A
from agentguard.language.walk import subformulas
from agentguard.monitor.atoms import Unsupported
from agentguard.monitor.builder import build_machine
from agentguard.monitor.compile import compile_plan
from agentguard.monitor.machine import MAX_EXPLORE, Machine
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, FallbackPlan, Plan, QuantPlan
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Matcher
from agentguard.severity import SeverityKind

STOPPING = frozenset({SeverityKind.HARD_STOP})
"""Severities for which a liveness constraint is misleading. SOFT_BLOCK and BLOCK_AND_WARN
on ``F cite`` still act (the final answer is sent back so the agent can cite first);
HARD_STOP can only end a run that is ending anyway, so it prevents nothing."""
JOINT_BUDGET = 20_000
"""States explored when deciding whether several constraints can hold together."""
SPEC_SECONDS = 20.0
"""Wall-clock bound on the per-constraint explorations of one spec together: each has its
own (``search.SECONDS``), and a spec of thousands of constraints multiplied it. Past it the
remaining constraints are not explored, and nothing is claimed about them."""
JOINT_SECONDS = 3.0
"""Wall-clock bound on the whole conflict search (a joint automaton can be slow to step)."""
WITNESS_SECONDS = 10.0
"""Wall-clock bound on ``lint --witness`` (asked for explicitly, so it may take longer)."""


@dataclass(frozen=True, slots=True)
class Facts:
    """What is proven about one formula (None: not decided)."""

    unsatisfiable: bool | None
    valid: bool | None
    never_refuted: bool | None = None
    late: str = ""  # why the monitor may decide late ("" when it is exact and earliest)
    exact: bool = False


def is_automaton(plan: Plan) -> bool:
    """Is the constraint monitored by automata alone (one machine, or a conjunction the
    monitor split into independent machines), so that joint searches can include it?"""
    if isinstance(plan, AutomatonPlan):
        return True
    return isinstance(plan, BoolPlan) and plan.split and all(is_automaton(c) for c in plan.children)


def facts_of(plan: Plan, deadline: float | None = None) -> Facts:
    """Fold a monitoring plan into proven facts (three-valued, never guessing); no
    exploration runs past ``deadline`` (a ``time.monotonic()`` time)."""
    if isinstance(plan, AutomatonPlan):
        return _machine_facts(explore(plan.machine, seconds=_left(deadline)))
    if isinstance(plan, QuantPlan):
        body = _machine_facts(explore(plan.machine, seconds=_left(deadline)))
        fixed = _fixed_domain(plan.domain)
        if plan.kind == "exists":
            # no binding can satisfy the body -> false on every trace; a true body needs a value
            return Facts(
                body.unsatisfiable is True or None,
                (body.valid is True and fixed) or None,
                body.never_refuted,
                body.late,
            )
        return Facts(
            (body.unsatisfiable is True and fixed) or None,
            body.valid is True or None,
            body.never_refuted,
            body.late,
        )
    if isinstance(plan, BoolPlan):
        kids = [facts_of(c, deadline) for c in plan.children]
        late = "; ".join([*(k.late for k in kids if k.late), *([plan.late] if plan.late else [])])
        if plan.op == "not":
            k = kids[0]
            return Facts(k.valid, k.unsatisfiable, None, late)
        if plan.op == "and":
            return Facts(
                any(k.unsatisfiable for k in kids) or None,
                all(k.valid for k in kids) or None,
                None,
                late,
            )
        return Facts(
            all(k.unsatisfiable for k in kids) or None,
            any(k.valid for k in kids) or None,
            None,
            late,
        )
    if isinstance(plan, FallbackPlan):
        return Facts(None, None, None, f"checked only at the end of the run ({plan.reason})")
    raise TypeError(f"unknown plan {type(plan).__name__}")  # pragma: no cover


def _left(deadline: float | None) -> float | None:
    """Seconds an exploration may take: its own bound, within what the deadline leaves."""
    if deadline is None:
        return None
    return max(0.0, min(search.SECONDS, deadline - time.monotonic()))


def _machine_facts(e: Exploration) -> Facts:
    late = ""
    if e.over_budget:
        late = (
            f"its automaton has more than {MAX_EXPLORE:,} reachable states, so the monitor "
            "may give verdicts later than the earliest point (sound, never wrong)"
        )
    return Facts(
        None if e.satisfiable is None else not e.satisfiable,
        e.valid,
        e.never_refuted,
        late,
        e.exact,
    )


def _fixed_domain(d: A.Domain | A.ListLiteral | None) -> bool:
    """A literal, non-empty domain list: the quantifier ranges over known values."""
    return (
        isinstance(d, A.ListLiteral)
        and bool(d.items)
        and all(isinstance(x, A.Literal) for x in d.items)
    )


def constraint_findings(
    c: A.Constraint, plan: Plan, source: str, deadline: float | None = None
) -> tuple[list[LintWarning], Facts]:
    """The temporal warnings about one constraint on its own."""
    f = facts_of(plan, deadline)
    how = "" if f.exact else " (data tests abstracted: this holds whatever the arguments)"
    out: list[LintWarning] = []
    if f.unsatisfiable:
        out.append(
            located(
                "unsatisfiable",
                c.name,
                f"constraint {c.name!r} can never hold: no finite trace satisfies it{how}",
                c.span,
                source,
            )
        )
    elif f.valid:
        out.append(
            located(
                "valid",
                c.name,
                f"constraint {c.name!r} holds on every trace, so it checks nothing{how}",
                c.span,
                source,
            )
        )
    elif f.never_refuted and c.severity.kind in STOPPING:
        out.append(
            located(
                "never-blocks",
                c.name,
                f"constraint {c.name!r} is {c.severity} but no prefix can refute it (pure "
                "liveness): it is only checked when the run ends, where a final answer that "
                "leaves it unsatisfied is refused",
                c.span,
                source,
            )
        )
    if f.late:
        out.append(
            located(
                "late",
                c.name,
                f"constraint {c.name!r} may be detected late: {f.late}{_wide_bound(c.formula)}",
                c.span,
                source,
            )
        )
    return out, f


_BOUNDED = (A.Eventually, A.Always, A.Once, A.Historically)
_SIGN = {A.Eventually: "F", A.Always: "G", A.Once: "O", A.Historically: "H"}


def _wide_bound(f: A.Formula) -> str:
    """Names the widest bound when it alone passes the state budget (a state per step up
    to the bound), so the author sees which operator to narrow; "" otherwise."""
    wide = [g for g in subformulas(f) if isinstance(g, _BOUNDED) and (g.bound or 0) > MAX_EXPLORE]
    if not wide:
        return ""
    g = max(wide, key=lambda w: w.bound or 0)
    where = f" at {g.span.line}:{g.span.column}" if g.span else ""
    return f" ({_SIGN[type(g)]}[<={g.bound}]{where} counts up to {g.bound:,} steps)"


def joint_machine(formulas: Sequence[A.Formula], match: Matcher = values_match) -> Machine | None:
    """One automaton for the conjunction (None when it cannot be built incrementally).

    Cached, so the witness search after lint's conflict check reuses the transitions
    already computed (a machine only memoises; sharing it changes no answer).
    """
    return _joint(tuple(formulas), match)


@lru_cache(maxsize=8)
def _joint(formulas: tuple[A.Formula, ...], match: Matcher) -> Machine | None:
    if not formulas:
        return None
    try:
        return build_machine(reduce(lambda a, b: A.And(a, b), formulas), None, match)
    except (Unsupported, RecursionError):
        return None


def jointly_unsatisfiable(
    formulas: Sequence[A.Formula], match: Matcher = values_match, deadline: float | None = None
) -> bool:
    """Proven: no trace satisfies all of them (False also when undecided)."""
    if deadline is not None and time.monotonic() > deadline:
        return False
    machine = joint_machine(formulas, match)
    if machine is None:
        return False
    # the first thing found is a path (satisfiable) or None (bound hit: undecided)
    paths = accepting_paths(machine, JOINT_BUDGET, deadline=deadline)
    return next(iter(paths), _EXHAUSTED) is _EXHAUSTED


_EXHAUSTED = object()


def minimal_conflict(
    candidates: Sequence[A.Constraint], match: Matcher = values_match
) -> tuple[A.Constraint, ...]:
    """A minimal jointly unsatisfiable subset (empty when none is proven).

    Deletion-based: drop each constraint in turn and keep it out if the rest still
    conflict. Every member is then necessary, so the set is minimal (not necessarily
    the smallest).
    """
    deadline = time.monotonic() + JOINT_SECONDS
    if len(candidates) < 2 or not jointly_unsatisfiable(
        [c.formula for c in candidates], match, deadline
    ):
        return ()
    kept = list(candidates)
    for c in list(candidates):
        rest = [k for k in kept if k is not c]
        # an undecided check keeps c: the set stays a proven conflict, perhaps not minimal
        if len(rest) >= 1 and jointly_unsatisfiable([k.formula for k in rest], match, deadline):
            kept = rest
    return tuple(kept)


def spec_findings(
    spec: A.Spec, match: Matcher = values_match, source: str | None = None
) -> list[LintWarning]:
    """Per-constraint findings, then a minimal conflicting set among the satisfiable ones."""
    src = source or spec.source
    out: list[LintWarning] = []
    joinable: list[A.Constraint] = []
    deadline = time.monotonic() + SPEC_SECONDS
    for c in spec.constraints:
        plan = compile_plan(c.formula, match)
        found, f = constraint_findings(c, plan, src, deadline)
        out.extend(found)
        if is_automaton(plan) and not f.unsatisfiable and not f.valid:
            joinable.append(c)
    conflict = minimal_conflict(joinable, match)
    if conflict:
        names = ", ".join(repr(c.name) for c in conflict)
        out.append(
            located(
                "conflict",
                conflict[0].name,
                f"constraints {names} are each satisfiable but no trace satisfies all of them "
                "(a minimal conflicting set: drop any one and the rest can hold)",
                conflict[0].span,
                src,
                tuple(c.name for c in conflict[1:]),
            )
        )
    return out
