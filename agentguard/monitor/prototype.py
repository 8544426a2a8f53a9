"""What every monitor of one compiled spec starts from, built once: a *prototype*.

A new :class:`~agentguard.monitor.Monitor` used to build each constraint's run-time node
from its plan, index the nodes by tool, read every initial verdict and lay out the
router: work that depends only on the compiled spec, the predicate registry and the
uncounted tools, yet was paid again by every agent run (a ``Firewall`` per run, a
LangChain invocation of one to three steps, an MCP request). Here it is done once per
(compiled spec, registry, uncounted tools): the prototype keeps one *template* node per
constraint, in the start state, never stepped, and what the monitor derives from the
start state. A monitor then clones the templates (:meth:`Node.clone`: each clone owns
every container it mutates) and copies the indexes, so two monitors of one spec share
only what is immutable or a memo table of a pure function (the compiled machines, the
letter plans), never run state.

A template is trusted only when building it ran no user code: a constraint whose start
state resolves a user predicate or comparison (a frozen atom at the initial state, or a
fixed domain's instances) is built afresh for every monitor, so an impure predicate, or
one registered after the first build, is evaluated as it was before; a prototype with
such a constraint also reads the initial verdicts and lays out the router per monitor.

The cache is keyed by the identity of the compiled spec and of the registry (each entry
holds both, so neither id can be reused while the entry lives) and the uncounted tools,
and keeps the :data:`CACHE_SIZE` most recently used prototypes: a process that builds
many specs keeps a bounded number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from typing_extensions import assert_never

from agentguard._identity_cache import IdentityCache
from agentguard._recursion import allow_deep
from agentguard.language import ast as A
from agentguard.monitor.atoms import FrozenAtom
from agentguard.monitor.compiled import CompiledSpec
from agentguard.monitor.counting import count_node
from agentguard.monitor.judge_probes import raisable
from agentguard.monitor.machine import Machine
from agentguard.monitor.nodes import Node, build_node
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, FallbackPlan, Plan, QuantPlan
from agentguard.monitor.routing import RouterLayout, layout
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.registry import Registry

CACHE_SIZE: Final = 64
"""Prototypes kept per process (least recently used ones are dropped)."""


@dataclass(frozen=True, eq=False)
class MonitorStart:
    """What a monitor derives from its nodes in their start state: the tool index, the
    initial verdicts and the router's layout."""

    by_name: MappingProxyType[str, tuple[str, ...]]  # tool -> constraints its calls may move
    always: tuple[str, ...]  # constraints every call may move
    counting: frozenset[str]  # budget constraints: stepped on once decided
    verdicts: MappingProxyType[str, Verdict]
    unstable: frozenset[str]  # named constraints a call to another tool may move
    routes: RouterLayout

    @classmethod
    def of(cls, nodes: Mapping[str, Node]) -> MonitorStart:
        """The start of a monitor with ``nodes`` (in spec order, none stepped yet)."""
        by_name: dict[str, list[str]] = {}
        always: list[str] = []
        for name, node in nodes.items():
            names = node.names
            if names is None:
                always.append(name)
            else:
                for tool in names:
                    by_name.setdefault(tool, []).append(name)
        verdicts = {n: node.verdict() for n, node in nodes.items()}
        pending = {n: x for n, x in nodes.items() if verdicts[n] is Verdict.PENDING}
        return cls(
            by_name=MappingProxyType({t: tuple(ns) for t, ns in by_name.items()}),
            always=tuple(always),
            counting=frozenset(n for n, node in nodes.items() if node.counts),
            verdicts=MappingProxyType(verdicts),
            unstable=frozenset(
                n for n, node in nodes.items() if node.names is not None and not node.stable()
            ),
            routes=layout(pending),
        )


@dataclass(frozen=True, eq=False)
class MonitorPrototype:
    """Every monitor of ``compiled`` (with ``registry``, ``uncounted``) starts from this.

    ``templates`` holds a never-stepped node per constraint whose start runs no user code
    (None for the others, built anew per monitor); ``start`` is what their start state
    gives, None when some node is built anew (then each monitor derives its own). Neither
    a template nor anything mutable here is handed to a monitor: it gets clones.
    """

    compiled: CompiledSpec
    registry: Registry
    uncounted: frozenset[str]
    templates: Mapping[str, Node | None]  # in spec order
    start: MonitorStart | None
    raisable_names: tuple[str, ...] = ()  # constraints with a user predicate (judge.py)
    raisable: frozenset[str] = frozenset()

    def nodes(self) -> dict[str, Node]:
        """A new run's nodes, in spec order: clones of the templates, and the nodes that
        must be built anew."""
        plans = self.compiled.plans
        return {
            name: self._build(plans[name]) if node is None else node.clone()
            for name, node in self.templates.items()
        }

    def _build(self, plan: Plan) -> Node:
        return count_node(plan) or build_node(
            plan, self.registry, self.compiled.match, self.uncounted
        )


@allow_deep
def _make(
    compiled: CompiledSpec, registry: Registry, uncounted: frozenset[str]
) -> MonitorPrototype:
    templates: dict[str, Node | None] = {}
    for name, plan in compiled.plans.items():
        templates[name] = (
            None
            if _runs_user_code(plan)
            else count_node(plan) or build_node(plan, registry, compiled.match, uncounted)
        )
    trusted = {n: node for n, node in templates.items() if node is not None}
    start = MonitorStart.of(trusted) if len(trusted) == len(templates) else None
    names = raisable(compiled.constraints)
    return MonitorPrototype(
        compiled, registry, uncounted, MappingProxyType(templates), start, names, frozenset(names)
    )


def _runs_user_code(plan: Plan) -> bool:
    """Does building ``plan``'s node evaluate a user predicate or comparison (a frozen
    atom resolved at the start)? Then its template is not reused (see the module)."""
    if isinstance(plan, AutomatonPlan):
        return _resolves_at_start(plan.machine)
    if isinstance(plan, QuantPlan):  # only a fixed domain makes instances at the start
        return isinstance(plan.domain, A.ListLiteral) and _resolves_at_start(plan.machine)
    if isinstance(plan, BoolPlan):
        return any(_runs_user_code(p) for p in plan.children)
    if isinstance(plan, FallbackPlan):
        return False
    assert_never(plan)


def _resolves_at_start(machine: Machine) -> bool:
    """Are frozen atoms resolved at the machine's initial state (as ``resolve_frozen``
    does without metrics)?"""
    atoms = machine.atoms
    return any(
        isinstance(atoms[i], FrozenAtom) and not atoms[i].metric  # type: ignore[union-attr]
        for i in machine.frozen_in(machine.init)
    )


_cache: IdentityCache[MonitorPrototype] = IdentityCache(CACHE_SIZE)


def prototype(
    compiled: CompiledSpec, registry: Registry, uncounted: frozenset[str]
) -> MonitorPrototype:
    """The prototype of monitors of ``compiled`` with ``registry`` and ``uncounted`` tools
    (cached, see the module)."""
    key = (id(compiled), id(registry), uncounted)
    return _cache.get(key, compiled, registry, lambda: _make(compiled, registry, uncounted))


def clear_cache() -> None:
    """Forget every prototype (tests; benchmarks measuring a cold build)."""
    _cache.clear()


__all__ = ["CACHE_SIZE", "MonitorPrototype", "MonitorStart", "clear_cache", "prototype"]
