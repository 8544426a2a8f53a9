"""A quantifier's instances: one machine state per value seen, grouped by state.

Values in the same state (and the same domain membership) form one :class:`Group` and
move together under the generic letter; the fresh state stands for every value not seen
yet. :class:`Instances` keeps the groups, moves them, and caches what only changes when
the set of group states does (the verdict, the truth at the end, self-loops).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import Self

from agentguard.errors import AgentGuardError
from agentguard.monitor.call_memo import about, hashable
from agentguard.monitor.machine import Letter
from agentguard.monitor.plans import QuantPlan
from agentguard.monitor.quant_sites import touched
from agentguard.monitor.state_sets import resolve_frozen
from agentguard.monitor.value_letters import LetterPlan
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.registry import Registry
from agentguard.trace.model import Call


@dataclass(slots=True)
class Group:
    """Instances in the same machine state (and the same domain membership)."""

    state: int
    in_domain: bool
    values: dict[Any, Any] = field(default_factory=dict)  # freeze(v) -> v


class Instances:
    """The instance groups of ``forall/exists x [in D]: body`` and how they move."""

    def __init__(self, plan: QuantPlan, registry: Registry) -> None:
        self.plan = plan
        self.machine = plan.machine
        self.registry = registry
        self.forall = plan.kind == "forall"
        self.error: str | None = None
        self.groups: dict[tuple[int, bool], Group] = {}
        self.where: dict[Any, Group] = {}
        self.fresh = self.machine.init
        self.fixed: dict[Any, Any] | None = None
        # `field contains x` is followed per value only on list fields; on text (substrings)
        # or mappings (keys) unseen values may match too, so such a node keeps its calls and
        # *degrades* to the offline evaluator at the first such call (PENDING until the end).
        self._contains = any(elements for _, _, elements in plan.sites)
        # one pass per call for every value (monitor/value_letters.py), when the body allows
        self._letters = None if self._contains else LetterPlan.build(self.machine, plan.var)
        self._verdict: Verdict | None = None  # caches, dropped whenever a group state moves
        self._final: tuple[bool | None] | None = None
        self._stable: bool | None = None
        self._loops: dict[Letter, bool] = {}
        # told whenever the states move (monitor/routing.py caches facts about them)
        self.watcher: Callable[[], None] | None = None
        touch_key = ("touched", plan.sites, plan.domain)
        self._touch_key = touch_key if plan.domain is None and hashable(touch_key) else None

    def clone(self) -> Self:
        """These instances in their current state, owning their groups (each a new
        :class:`Group`, in the same order) and caches; the plan, machine, letter plan and
        registry are shared (compiled, read-only or memo tables of pure functions). The
        clone has no watcher: the router of the monitor that holds it sets one. Every
        attribute of ``__init__`` is set here, in its order; subclasses add theirs."""
        new = object.__new__(type(self))
        new.plan = self.plan
        new.machine = self.machine
        new.registry = self.registry
        new.forall = self.forall
        new.error = self.error
        if self.groups:
            mine = {
                id(g): Group(g.state, g.in_domain, dict(g.values)) for g in self.groups.values()
            }
            new.groups = {k: mine[id(g)] for k, g in self.groups.items()}
            new.where = {k: mine[id(g)] for k, g in self.where.items()}
        else:
            new.groups, new.where = {}, {}
        new.fresh = self.fresh
        new.fixed = None if self.fixed is None else dict(self.fixed)
        new._contains = self._contains
        new._letters = self._letters
        new._verdict = self._verdict
        new._final = self._final
        new._stable = self._stable
        new._loops = dict(self._loops) if self._loops else {}
        new.watcher = None
        new._touch_key = self._touch_key
        return new

    def _touched(self, call: Call) -> dict[Any, tuple[Any, bool]]:
        """Values this call mentions: key -> (value, enters the domain); shared with every
        constraint over the same fields (monitor/call_memo.py). Read-only."""
        if self._touch_key is None:
            return touched(self.plan, self.fixed, call)
        return about(call, self._touch_key, lambda: touched(self.plan, self.fixed, call))

    def _new_instance(self, value: Any) -> int:
        try:
            return resolve_frozen(
                self.machine, self.fresh, {self.plan.var: value}, self.registry, None
            )
        except AgentGuardError as exc:
            self.error = self.error or str(exc)
            self._changed()
            return self.fresh

    def _loops_under(self, letter: Letter) -> bool:
        """Does ``letter`` leave the fresh state and every group where they are?"""
        found = self._loops.get(letter)
        if found is None:
            m = self.machine
            found = m.step(self.fresh, letter) == self.fresh and all(
                m.step(g.state, letter) == g.state for g in self.groups.values()
            )
            self._loops[letter] = found
        return found

    def _changed(self) -> None:
        """A state moved: the cached verdict, truth and self-loops no longer hold."""
        self._verdict = None
        self._final = None
        self._stable = None
        if self._loops:
            self._loops = {}
        if self.watcher is not None:
            self.watcher()

    def _insert(self, key: Any, value: Any, state: int, in_domain: bool) -> None:
        gkey = (state, in_domain)
        g = self.groups.get(gkey)
        if g is None:  # verdicts and self-loops read the groups' states, not their sizes
            self._changed()
            g = self.groups[gkey] = Group(state, in_domain)
        g.values[key] = value
        self.where[key] = g

    def _detach(self, key: Any) -> Group:
        g = self.where.pop(key)
        del g.values[key]
        if not g.values:
            self._changed()
            del self.groups[(g.state, g.in_domain)]
        return g

    def _regroup(self, generic: Letter) -> None:
        """Step every group and the fresh state with ``generic``, merging groups that meet."""
        m = self.machine
        self._changed()
        old = list(self.groups.values())
        self.groups = {}
        for g in old:
            g.state = m.step(g.state, generic)
            gkey = (g.state, g.in_domain)
            other = self.groups.get(gkey)
            if other is None:
                self.groups[gkey] = g
                continue
            small, big = (g, other) if len(g.values) < len(other.values) else (other, g)
            big.values.update(small.values)
            for k in small.values:
                self.where[k] = big
            self.groups[gkey] = big
        self.fresh = m.step(self.fresh, generic)
