"""Where a user predicate may raise, before any call: the static side of the error judge.

The judge (monitor/judge.py) settles constraints whose user predicates raise as the
offline evaluator does. What it needs to know from the formulas alone lives here: which
constraints may raise at all, which applications raise with arguments known at the start
(the compiler may have simplified them away from the nodes), and, for parametric
quantifiers, the fields whose new values must be probed, indexed by tool so that a step
reads only its own tool's sites.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.walk import children, subformulas
from agentguard.semantics.domains import values_at_site
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.registry import Matcher, Registry
from agentguard.semantics.values import freeze
from agentguard.semantics.variables import collect_sites
from agentguard.trace.model import Call, Trace

Site = tuple["str | None", "tuple[str | int, ...]", bool]


def may_raise(f: A.Formula) -> bool:
    """Does ``f`` apply a user predicate (``boom(x)``, ``Predicate(name)``)?"""
    return any(
        isinstance(g, A.UserPredicate)
        or (isinstance(g, A.TracePredicate) and g.name == "Predicate")
        for g in subformulas(f)
    )


def raisable(constraints: Sequence[A.Constraint]) -> tuple[str, ...]:
    """The names of the constraints whose evaluation may run a user predicate."""
    return tuple(c.name for c in constraints if may_raise(c.formula))


def raises_at_start(
    f: A.Formula,
    registry: Registry,
    match: Matcher,
    env: Mapping[str, Any] | None = None,
    ev: Evaluator | None = None,
) -> str | None:
    """The error of a user predicate application of ``f`` whose arguments are known under
    ``env`` (constants, values of fixed domains), else None. The nodes may never ask one
    (the compiler simplifies ``boom(1) -> boom(1)`` away, a residual drops what it no
    longer needs) where the evaluator still does: such an error makes the node's answer
    unreliable, and the constraint is judged."""
    ev = ev or Evaluator(Trace(()), registry=registry, match=match)
    stack: list[tuple[A.Formula, dict[str, Any]]] = [(f, dict(env or {}))]
    while stack:
        g, env = stack.pop()
        try:
            if isinstance(g, A.Quantified):
                inner = {k: v for k, v in env.items() if k != g.var}  # shadowed
                if isinstance(g.domain, A.ListLiteral) and ev.free_vars(g.domain) <= set(env):
                    stack.extend((g.body, {**inner, g.var: v}) for v in ev.domain(g.domain, env))
                else:  # a domain from the trace: what does not read the variable
                    stack.append((g.body, inner))
                continue
            if isinstance(g, A.UserPredicate):
                if ev.free_vars(g) <= set(env):
                    ev.empty_value(g, env)
                continue
        except AgentGuardError as exc:
            return str(exc)
        stack.extend((c, env) for c in children(g))
    return None


Probe = tuple[A.Quantified, tuple[Site, ...]]
# a probed site: its quantifier, field path, element-wise flag, and the values the
# quantifier has had probed (one set per quantifier, shared by its sites)
ProbeSite = tuple[A.Quantified, "tuple[str | int, ...]", bool, set[Any]]
# a constraint's probe sites by tool (each list with the sites of any tool), and the
# sites of any tool alone (for a tool no site names)
ProbeIndex = tuple[dict[str, list[ProbeSite]], list[ProbeSite]]


def probe_index(probes: Sequence[Probe]) -> ProbeIndex:
    """The sites of ``probes`` by tool, so a call reads only its own tool's sites."""
    seen: dict[int, set[Any]] = {id(q): set() for q, _ in probes}
    anywhere = [
        (q, path, elements, seen[id(q)])
        for q, sites in probes
        for tool, path, elements in sites
        if tool is None
    ]
    by_tool: dict[str, list[ProbeSite]] = {}
    for q, sites in probes:
        for tool, path, elements in sites:
            if tool is not None:
                by_tool.setdefault(tool, list(anywhere)).append((q, path, elements, seen[id(q)]))
    return by_tool, anywhere


# a site any probed constraint reads on a tool: its path, element-wise flag, probed
# values, and its key when the site is one plain argument (read without a call)
ToolSite = tuple["tuple[str | int, ...]", bool, set[Any], "str | None"]


def tool_sites(
    probes: Mapping[str, ProbeIndex],
) -> tuple[dict[str, list[ToolSite]], list[ToolSite]]:
    """Every probed constraint's sites by tool (with those of any tool), and those of any
    tool alone: a step looks at its tool's list only, and only for a new value."""

    def site(s: ProbeSite) -> ToolSite:
        _, path, elements, seen = s
        key = path[0] if len(path) == 1 and not elements else None
        return path, elements, seen, key if isinstance(key, str) and key != "result" else None

    tools = {t for by_tool, _ in probes.values() for t in by_tool}
    anywhere = [site(s) for _, any_tool in probes.values() for s in any_tool]
    by_tool = {
        t: [site(s) for index, any_tool in probes.values() for s in index.get(t, any_tool)]
        for t in tools
    }
    return by_tool, anywhere


def applications(q: A.Quantified, ev: Evaluator) -> tuple[A.UserPredicate, ...] | None:
    """The user predicate applications :func:`raises_at_start` evaluates in ``q``'s body
    under ``q``'s variable alone, if the body has no quantifier (None: walk it per value)."""
    out: list[A.UserPredicate] = []
    stack: list[A.Formula] = [q.body]
    known = {q.var}
    while stack:
        g = stack.pop()
        if isinstance(g, A.Quantified):
            return None
        if isinstance(g, A.UserPredicate):
            if ev.free_vars(g) <= known:
                out.append(g)
            continue
        stack.extend(children(g))
    return tuple(out)


def parametric(f: A.Formula) -> tuple[list[Probe], bool]:
    """The parametric quantifiers of ``f`` with their sites, and whether one lies inside
    another quantifier (its values then combine with the outer ones: not probed alone)."""
    out: list[Probe] = []
    nested = False
    stack: list[tuple[A.Formula, bool]] = [(f, False)]
    while stack:
        g, inside = stack.pop()
        if isinstance(g, A.Quantified):
            if g.domain is None:
                nested = nested or inside
                sites: list[Site] = []
                collect_sites(g.body, g.var, sites)
                out.append((g, tuple(sites)))
            stack.append((g.body, True))
            continue
        stack.extend((c, inside) for c in children(g))
    return out, nested


def node_raised(node: Any) -> bool:
    """Has ``node`` or a part of it (a boolean combination's children) raised?"""
    if getattr(node, "error", None):
        return True
    children: Sequence[Any] = getattr(node, "children", None) or ()
    return any(node_raised(c) for c in children)


class Prober:
    """The probes of a judge's constraints: each parametric quantifier's sites by tool,
    with the values probed so far (an optimisation only: not saved), and the constraints
    whose parametric quantifier lies inside another (judged from the start instead)."""

    def __init__(
        self, constraints: Mapping[str, A.Constraint], registry: Registry, match: Matcher
    ) -> None:
        self.registry = registry
        self.match = match
        self.probes: dict[str, ProbeIndex] = {}
        self.nested: set[str] = set()
        for name, constraint in constraints.items():
            probes, nested = parametric(constraint.formula)
            if nested:
                self.nested.add(name)
            elif probes:
                self.probes[name] = probe_index(probes)
        self.tool_sites, self.any_sites = tool_sites(self.probes)
        self._empty: Evaluator | None = None  # for the probes, made at the first one
        self._apps: dict[int, tuple[A.UserPredicate, ...] | None] = {}

    def probe(self, name: str, calls: Sequence[Call], commit: bool) -> bool | None:
        """Does a value ``calls`` bring to a parametric quantifier of ``name`` make one of
        its predicate applications raise? None: no value is new."""
        probes = self.probes.get(name)
        if probes is None:
            return None
        by_tool, anywhere = probes
        new: bool | None = None
        for c in calls:
            for q, path, elements, seen in by_tool.get(c.name, anywhere):
                for v in values_at_site(c, path, elements):
                    key = freeze(v)
                    if key in seen:
                        continue
                    if commit:
                        seen.add(key)
                    if self._raises_for(q, v):
                        return True
                    new = False
        return new

    def _raises_for(self, q: A.Quantified, value: Any) -> bool:
        """Does an application of ``q``'s body raise with ``value`` for its variable? A
        body with no quantifier inside has its applications listed once (those of the
        variable and constants alone); one evaluator of the empty trace serves them all."""
        ev = self._empty
        if ev is None:
            ev = self._empty = Evaluator(Trace(()), registry=self.registry, match=self.match)
        if id(q) not in self._apps:
            self._apps[id(q)] = applications(q, ev)
        apps = self._apps[id(q)]
        if isinstance(apps, tuple):
            env = {q.var: value}
            try:
                for g in apps:
                    ev.empty_value(g, env)
            except AgentGuardError:
                return True
            return False
        return raises_at_start(q.body, self.registry, self.match, {q.var: value}, ev) is not None

    def new_value(self, call: Call) -> bool:
        """Does ``call`` bring a value a probed quantifier has not had (the common step
        has none: one lookup per site of its tool)?"""
        for path, elements, seen, plain in self.tool_sites.get(call.name, self.any_sites):
            args = call.args
            if plain is not None and type(args) is dict and plain in args:
                v = args[plain]
                if (v if type(v) is str or type(v) is int else freeze(v)) not in seen:
                    return True
                continue
            if any(freeze(v) not in seen for v in values_at_site(call, path, elements)):
                return True
        return False


__all__ = [
    "Probe",
    "ProbeIndex",
    "ProbeSite",
    "Prober",
    "Site",
    "ToolSite",
    "applications",
    "may_raise",
    "node_raised",
    "parametric",
    "probe_index",
    "raisable",
    "raises_at_start",
    "tool_sites",
]
