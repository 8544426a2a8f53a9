"""Run-time monitors of one constraint (or one part of it), built from a plan.

Every node answers the same questions: its verdict now, its truth if the run ended now
(``final``), its truth once the run has ended with known metrics (``finish``), and the
same two after a hypothetical extension (``peek``), without committing anything.
Quantified nodes live in :mod:`agentguard.monitor.quantified`, the node judged at the end
in :mod:`agentguard.monitor.fallback`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agentguard.errors import AgentGuardError
from agentguard.monitor.atoms import FrozenAtom
from agentguard.monitor.budget import Known, known
from agentguard.monitor.fallback import FallbackNode
from agentguard.monitor.machine import OTHER, Machine
from agentguard.monitor.persistence import (
    expect_int,
    expect_list,
    expect_mapping,
    expect_str,
    restore_cstate,
    save_cstate,
)
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, FallbackPlan, Plan, QuantPlan
from agentguard.monitor.quantified import QuantNode
from agentguard.monitor.state_sets import (
    resolve_frozen,
    set_final,
    set_verdict,
)
from agentguard.monitor.verdict import (
    Classification,
    Enforceability,
    Verdict,
    kleene_and,
    kleene_not,
    kleene_or,
)
from agentguard.semantics.registry import Matcher, Registry
from agentguard.trace.model import Call


class Node(Protocol):
    """What the monitor asks of every constraint part."""

    error: str | None

    @property
    def names(self) -> frozenset[str] | None: ...  # tools that move it; None: every call
    @property
    def counts(self) -> bool: ...  # decides num_tool_calls budgets online (see budget.py)

    def stable(self) -> bool: ...  # unchanged by a call to a tool outside ``names``
    def step(self, call: Call) -> None: ...
    def verdict(self) -> Verdict: ...
    def final(self) -> bool | None: ...
    def finish(self, metrics: Mapping[str, Any]) -> bool: ...
    def peek(
        self, calls: Sequence[Call], ending: bool, errors: list[str]
    ) -> tuple[Verdict, bool | None]: ...
    def classify(self) -> Classification: ...
    def over_budget(self) -> bool: ...  # its automaton exceeded the state budget
    def save(self) -> dict[str, Any]: ...
    def restore(self, doc: Mapping[str, Any]) -> None: ...
    def clone(self) -> Node: ...  # this node in its state, owning every mutable part


class AutomatonNode:
    """A quantifier-free formula: one machine state.

    With ``metrics.num_tool_calls`` budgets (monitor/budget.py) the node also counts
    calls: verdicts are read on the state *viewed* with the budget atoms the count
    decides, while the stepped state keeps them symbolic for ``finish(metrics)``.
    """

    def __init__(
        self, machine: Machine, registry: Registry, uncounted: frozenset[str] = frozenset()
    ) -> None:
        self.machine = machine
        self.registry = registry
        self.error: str | None = None  # a user predicate raised (monitor/judge.py decides)
        self._names = frozenset(machine.names)
        self.budget = machine.budget_tests()
        self.uncounted = uncounted
        self.count = 0
        self._views: dict[tuple[int, Known], int] = {}
        self._stable_at = -1  # the state `_stable` was computed for (-1: none yet)
        self._stable = False
        try:
            self.state = resolve_frozen(machine, machine.init, {}, registry, None)
        except AgentGuardError as exc:
            self.error, self.state = str(exc), machine.init

    @property
    def names(self) -> frozenset[str] | None:
        return None if self.budget else self._names

    @property
    def counts(self) -> bool:
        return bool(self.budget)

    def stable(self) -> bool:
        state = self.state
        if state == self._stable_at:  # asked after every step: answered once per state
            return self._stable
        m = self.machine
        self._stable = not m._data[OTHER] and m.step(state, (OTHER, 0)) == state
        self._stable_at = state
        return self._stable

    def view(self, state: int, count: int, *, ending: bool = False) -> int:
        """``state`` with the budget atoms that ``count`` calls decide resolved."""
        if not self.budget:
            return state
        values = known(self.budget, count, ending=ending)
        if not values:
            return state
        key = (state, values)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = self.machine.resolve(state, dict(values))
        return found

    def _counted(self, calls: Sequence[Call]) -> int:
        return sum(1 for c in calls if c.name not in self.uncounted)

    def step(self, call: Call) -> None:
        m = self.machine
        if self.budget and call.name not in self.uncounted:
            self.count += 1
        try:
            self.state = m.step(self.state, m.letters_of(call, {}, pending=False)[0])
        except AgentGuardError as exc:
            self.error = str(exc)

    def verdict(self) -> Verdict:
        if self.error:
            return Verdict.VIOLATED
        return self.machine.verdict(self.view(self.state, self.count))

    def final(self) -> bool | None:
        if self.error:
            return False
        return self.machine.final(self.view(self.state, self.count, ending=True))

    def finish(self, metrics: Mapping[str, Any]) -> bool:
        if self.error:
            return False
        try:
            return self.machine.accepts(
                resolve_frozen(self.machine, self.state, {}, self.registry, metrics)
            )
        except AgentGuardError as exc:
            self.error = str(exc)
            return False

    def peek(
        self,
        calls: Sequence[Call],
        ending: bool,
        errors: list[str],
    ) -> tuple[Verdict, bool | None]:
        if self.error:
            return Verdict.VIOLATED, False
        m = self.machine
        count = self.count + self._counted(calls) if self.budget else 0
        try:
            if len(calls) == 1:  # the common case: one proposal, usually one letter
                letters = m.letters_of(calls[0], {}, pending=True)
                if len(letters) == 1:
                    nxt = m.step(self.state, letters[0])
                    if not self.budget:
                        return m.verdict(nxt), (m.final(nxt) if ending else None)
                    v = m.verdict(self.view(nxt, count))
                    return v, (m.final(self.view(nxt, count, ending=True)) if ending else None)
            states = {self.state}
            for call in calls:
                letters = m.letters_of(call, {}, pending=True)
                states = {m.step(s, letter) for s in states for letter in letters}
        except AgentGuardError as exc:
            errors.append(str(exc))
            return Verdict.VIOLATED, False
        if self.budget:
            final = {self.view(s, count, ending=True) for s in states} if ending else set()
            states = {self.view(s, count) for s in states}
            return set_verdict(states, m), (set_final(final, m) if ending else None)
        return set_verdict(states, m), (set_final(states, m) if ending else None)

    def over_budget(self) -> bool:
        return self.machine.too_large

    def classify(self) -> Classification:
        found = self.machine.classify()
        metric = [a for a in self.machine.atoms if isinstance(a, FrozenAtom) and a.metric]
        if self.budget and len(metric) == len(self.budget):
            reason = "a metrics.num_tool_calls budget: decided online by the call count"
            return Classification(found.kind, found.exact, reason)
        return found

    def save(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"state": save_cstate(self.machine, self.state), "error": self.error}
        if self.budget:
            doc["count"] = self.count
        return doc

    def restore(self, doc: Mapping[str, Any]) -> None:
        doc = expect_mapping(doc, "a constraint's state")
        self.state = restore_cstate(self.machine, doc.get("state"))
        self.error = expect_str(doc.get("error"), "error", optional=True)
        self.count = expect_int(doc.get("count", 0), "the call count")

    def clone(self) -> AutomatonNode:
        """This node in its current state: a new run starts from a clone of a template
        (:mod:`~agentguard.monitor.prototype`), so a clone shares only the compiled machine,
        the registry and immutable values; its memo of views is its own. Every attribute
        of ``__init__`` is set here, in its order (one attribute layout for all nodes)."""
        new = AutomatonNode.__new__(AutomatonNode)
        new.machine = self.machine
        new.registry = self.registry
        new.error = self.error
        new._names = self._names
        new.budget = self.budget
        new.uncounted = self.uncounted
        new.count = self.count
        new._views = dict(self._views) if self._views else {}
        new._stable_at = self._stable_at
        new._stable = self._stable
        new.state = self.state
        return new


class BoolNode:
    """A boolean combination of parts that hold quantifiers (Kleene logic on verdicts)."""

    def __init__(
        self, op: str, children: Sequence[Node], *, split: bool = False, late: str = ""
    ) -> None:
        self.op = op
        self.children = list(children)
        self.error: str | None = None
        self.split = split  # independent conjuncts (monitor/decompose.py)
        self.late = late  # why a split's verdicts may come late ("" when exact)

    @property
    def names(self) -> frozenset[str] | None:
        out: frozenset[str] = frozenset()
        for c in self.children:
            if c.names is None:
                return None
            out |= c.names
        return out

    @property
    def counts(self) -> bool:
        return any(c.counts for c in self.children)

    def stable(self) -> bool:
        return all(c.stable() for c in self.children)

    def step(self, call: Call) -> None:
        for c in self.children:
            c.step(call)

    def _combine(self, values: list[Verdict]) -> Verdict:
        if self.op == "not":
            return kleene_not(values[0])
        fn = kleene_and if self.op == "and" else kleene_or
        out = values[0]
        for v in values[1:]:
            out = fn(out, v)
        return out

    def _combine_bool(self, values: list[bool | None]) -> bool | None:
        if self.op == "not":
            return None if values[0] is None else not values[0]
        if self.op == "and":
            if False in values:
                return False
            return None if None in values else True
        if True in values:
            return True
        return None if None in values else False

    def verdict(self) -> Verdict:
        return self._combine([c.verdict() for c in self.children])

    def final(self) -> bool | None:
        return self._combine_bool([c.final() for c in self.children])

    def finish(self, metrics: Mapping[str, Any]) -> bool:
        return bool(self._combine_bool([c.finish(metrics) for c in self.children]))

    def peek(
        self, calls: Sequence[Call], ending: bool, errors: list[str]
    ) -> tuple[Verdict, bool | None]:
        parts = [c.peek(calls, ending, errors) for c in self.children]
        verdict = self._combine([p[0] for p in parts])
        return verdict, (self._combine_bool([p[1] for p in parts]) if ending else None)

    def over_budget(self) -> bool:
        return any(c.over_budget() for c in self.children)

    def classify(self) -> Classification:
        kinds = [c.classify() for c in self.children]
        exact = all(k.exact for k in kinds)
        if self.op == "and" and all(k.kind is Enforceability.SAFETY for k in kinds):
            return Classification(Enforceability.SAFETY, exact)
        if self.split and not self.late:  # a bad prefix of the whole is one of a part
            if all(k.kind is Enforceability.LIVENESS for k in kinds):
                return Classification(Enforceability.LIVENESS, exact)
            return Classification(Enforceability.MIXED, exact)
        if self.split:
            return Classification(Enforceability.MIXED, False, self.late)
        return Classification(Enforceability.MIXED, False, "boolean combination of quantifiers")

    def save(self) -> dict[str, Any]:
        return {"children": [c.save() for c in self.children]}

    def restore(self, doc: Mapping[str, Any]) -> None:
        parts = expect_list(expect_mapping(doc, "a constraint's state").get("children"), "parts")
        if len(parts) != len(self.children):
            raise ValueError(f"{len(parts)} parts saved, {len(self.children)} expected")
        for c, d in zip(self.children, parts, strict=True):
            c.restore(d)

    def clone(self) -> BoolNode:
        """This node in its current state, over clones of its parts."""
        new = BoolNode.__new__(BoolNode)
        new.op = self.op
        new.children = [c.clone() for c in self.children]
        new.error = self.error
        new.split = self.split
        new.late = self.late
        return new


def build_node(
    plan: Plan, registry: Registry, match: Matcher, uncounted: frozenset[str] = frozenset()
) -> Node:
    """The run-time node of a plan; ``uncounted`` tools do not count towards budgets."""
    if isinstance(plan, AutomatonPlan):
        return AutomatonNode(plan.machine, registry, uncounted)
    if isinstance(plan, BoolPlan):
        children = [build_node(p, registry, match, uncounted) for p in plan.children]
        return BoolNode(plan.op, children, split=plan.split, late=plan.late)
    if isinstance(plan, QuantPlan):
        return QuantNode(plan, registry)
    if isinstance(plan, FallbackPlan):
        return FallbackNode(plan.formula, plan.reason, registry, match)
    raise TypeError(plan)  # pragma: no cover
