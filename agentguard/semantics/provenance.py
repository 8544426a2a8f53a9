"""Provenance tests lowered to plain tests on a fact the provenance index writes.

``PATH from SOURCE`` at position i depends on the calls before i, never after, and on
nothing a quantifier binds (a source holds no variable). So it is a *fact of the call at
i*, computable when the call is proposed: :mod:`.provenance_index` computes each test's
fact from per-source indexes of what earlier calls showed and writes it into the call's
view (under :data:`~agentguard.language.ast.PROVENANCE_FIELD`, where no argument can
be), and the formula reads it with a plain test ``fact = true``. The offline evaluator,
the monitor and every scorer then judge one ordinary formula on the same views: online
equals offline by construction, and the monitor's classification sees a test on the
current call (a present-time atom: a constraint of ``from`` tests and past operators is
SAFETY, enforced by ``propose``).

A missing PATH writes no fact, so both ``from`` and ``not from`` are false there (the
``⊥`` rule of docs/language.md).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentguard._recursion import allow_deep
from agentguard.language import ast as A
from agentguard.language.printer import term as print_term
from agentguard.language.walk import children, subformulas


@dataclass(frozen=True, slots=True)
class FromTest:
    """One ``from`` test of a spec: its key (its text), the argument path it reads, the
    indexes of its source's parts in :attr:`ProvenancePlan.parts`, and its polarity."""

    key: str
    path: tuple[str | int, ...]
    parts: tuple[int, ...]
    negated: bool
    tools: frozenset[str] | None = None  # the atoms' tools (None: an `any` atom has it)


@dataclass(frozen=True, slots=True)
class ProvenancePlan:
    """What the provenance index of a spec computes: its ``from`` tests, the distinct
    source parts they read (patterns lowered), the trust declarations and the result
    formats of tools declared ``returns yaml|json``."""

    tests: tuple[FromTest, ...] = ()
    parts: tuple[A.SourcePart, ...] = ()
    trust: tuple[A.TrustDecl, ...] = ()
    formats: tuple[tuple[str, str], ...] = ()


class _Lowering:
    """Rewrites ``from`` tests (nested ones in source patterns too) and collects them."""

    def __init__(self) -> None:
        self.tests: dict[str, FromTest] = {}
        self.parts: dict[A.SourcePart, int] = {}
        self.tools: dict[str, set[str | None]] = {}  # a test's key -> its atoms' tools
        self._memo: dict[int, tuple[A.Formula, A.Formula]] = {}

    def formula(self, f: A.Formula) -> A.Formula:
        found = self._memo.get(id(f))
        if found is not None and found[0] is f:
            return found[1]
        out = self._rebuild(f)
        self._memo[id(f)] = (f, out)
        return out

    def _rebuild(self, f: A.Formula) -> A.Formula:
        if isinstance(f, A.Event):
            return self.event(f)
        kids = children(f)
        if not kids:
            return f
        new = [self.formula(k) for k in kids]
        if all(a is b for a, b in zip(kids, new, strict=True)):
            return f
        if isinstance(f, A.Quantified):
            return dataclasses.replace(f, body=new[0])
        # the one- and two-operand nodes name their operands alike (walk.children)
        changes = {"operand": new[0]} if len(kids) == 1 else {"left": new[0], "right": new[1]}
        out: A.Formula = dataclasses.replace(f, **changes)  # type: ignore[arg-type]
        return out

    def event(self, e: A.Event) -> A.Event:
        tests = tuple(self.test(t, e.tool) for t in e.tests)
        if all(a is b for a, b in zip(e.tests, tests, strict=True)):
            return e
        return A.Event(e.tool, tests, e.outcome, e.span)

    def test(self, t: A.Test, tool: str | None) -> A.Test:
        if t.op not in A.PROVENANCE_OPS or not isinstance(t.value, A.Source):
            return t
        key = f"{print_term(t.field)} {t.op} {print_term(t.value)}"
        tools = self.tools.setdefault(key, set())
        tools.add(tool)
        if key not in self.tests:
            parts: list[int] = []
            for p in t.value.parts:
                pattern = None if p.pattern is None else self.event(p.pattern)
                lowered = A.SourcePart(p.kind, pattern, p.path, p.values)
                parts.append(self.parts.setdefault(lowered, len(self.parts)))
            self.tests[key] = FromTest(key, t.field.path, tuple(parts), t.op == "not from")
        return A.Test(
            A.FieldRef((A.PROVENANCE_FIELD, key), t.field.span), "=", A.Literal(True), t.span
        )

    def plan(self, spec: A.Spec | None) -> ProvenancePlan | None:
        formats = (
            () if spec is None else tuple((t.name, t.returns) for t in spec.tools if t.returns)
        )
        if not self.tests and not formats:
            return None
        tests = tuple(
            dataclasses.replace(
                t,
                tools=None
                if None in self.tools[t.key]
                else frozenset(x for x in self.tools[t.key] if x is not None),
            )
            for t in self.tests.values()
        )
        return ProvenancePlan(
            tests,
            tuple(self.parts),
            () if spec is None else spec.trust,
            formats,
        )


def has_provenance(formulas: Iterable[A.Formula]) -> bool:
    """Does any event atom of ``formulas`` hold a ``from`` test?"""
    return any(
        isinstance(node, A.Event) and any(t.op in A.PROVENANCE_OPS for t in node.tests)
        for f in formulas
        for node in subformulas(f)
    )


@allow_deep
def lower_formula(f: A.Formula) -> tuple[A.Formula, ProvenancePlan | None]:
    """``f`` with its ``from`` tests lowered, and the plan (None: it has none)."""
    low = _Lowering()
    out = low.formula(f)
    return out, low.plan(None)


_LOCK = threading.Lock()
_SPECS: dict[int, tuple[object, Any]] = {}


@allow_deep
def lower_spec(
    spec: A.Spec | Sequence[A.Constraint],
) -> tuple[A.Spec | tuple[A.Constraint, ...], ProvenancePlan | None]:
    """The spec with every ``from`` test lowered (constraints and ``requires``), and its
    plan; a spec with no ``from`` test and no result format comes back as it is."""
    found = _SPECS.get(id(spec))
    if found is not None and found[0] is spec:
        cached: tuple[A.Spec | tuple[A.Constraint, ...], ProvenancePlan | None] = found[1]
        return cached
    low = _Lowering()
    constraints = spec.constraints if isinstance(spec, A.Spec) else tuple(spec)
    lowered = tuple(dataclasses.replace(c, formula=low.formula(c.formula)) for c in constraints)
    out: A.Spec | tuple[A.Constraint, ...]
    if isinstance(spec, A.Spec):
        tools = tuple(
            dataclasses.replace(t, requires=low.formula(t.requires))
            if t.requires is not None
            else t
            for t in spec.tools
        )
        plan = low.plan(spec)
        out = dataclasses.replace(spec, constraints=lowered, tools=tools) if plan else spec
    else:
        plan = low.plan(None)
        out = lowered if plan else tuple(spec)
    if not isinstance(spec, (A.Spec, tuple)):
        return out, plan  # a list may change under the same id: never cached
    with _LOCK:
        if len(_SPECS) >= 32:
            del _SPECS[next(iter(_SPECS))]
        _SPECS[id(spec)] = (spec, (out, plan))
    return out, plan
