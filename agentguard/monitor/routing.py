"""Which quantified constraints a call on a shared tool cannot move: they are skipped.

The monitor's tool index sends a call to every constraint that mentions its tool; fifty
constraints ``forall o: G(use(id = o, lane = k) -> O open(id = o))`` (k = 0..49) all get
every ``use`` and every ``open``. For most of them the step is known in advance:

* **still** -- the call gives every value the same letter (no atom that tests the
  variable can hold: ``use(id = 3, lane = 7)`` fails ``lane = 12``), that letter loops on
  the fresh state and on every group, and the value it mentions (if any) is already an
  instance: the step changes nothing.
* **join** -- the call mentions one value no instance has yet (``open(id = 42)``), every
  other value's letter loops, and the new value's first state is already the state of a
  group (in the domain): the step is one insertion into that group, which this module
  does itself; the verdict and the truth at the end stay as they are.

A skipped step equals the real one exactly, so a constraint is skipped only when its
letters for the call are known without evaluating them: every atom of the call's tool
class tests only ``field = literal`` on arguments, or ``field = x`` on the one field the
variable is read from for that tool (see :class:`~agentguard.monitor.value_letters.LetterPlan`).
Those literals' keys on the call are its *signature* (a key no atom tests for counts as
any other: the caches stay as small as the spec); the letters are computed once per
constraint and signature, and whether they skip is cached per (signature, kind) until
the constraint's states change (``Instances._changed`` tells the router through
``watcher``). Every other constraint, and any call with a field that has no plain key, is
stepped as before.

The constraints routed together share their sites (the fields the variable is read
from) and have no explicit domain, so they have seen exactly the same values, all in the
domain: one of them answers "is this value new?" for all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any, Final, TypeAlias

from agentguard.monitor.machine import Letter
from agentguard.monitor.quant_groups import Group
from agentguard.monitor.quantified import QuantNode
from agentguard.semantics.values import MISSING, UNKEYED, call_field, plain_key
from agentguard.trace.model import Call

Path: TypeAlias = "tuple[str | int, ...]"
Signature: TypeAlias = "tuple[Any, ...]"

Join: TypeAlias = "tuple[dict[Any, Any], dict[Any, Group], Group]"
"""Where a joined constraint puts a new value: its group's values, its index, the group."""

UNTESTED: Final = MISSING
"""A field's key in a signature when no atom tests the field for it (or it is absent)."""

NO_VALUE: Final = 0  # the call mentions no value at the site
SEEN: Final = 1  # it mentions a value every constraint of the route has an instance of
NEW: Final = 2  # it mentions a value none has


@dataclass(slots=True)
class Skips:
    """What a call of one signature and kind skips on one route (rebuilt after a change)."""

    skip: frozenset[str]
    joins: tuple[Join, ...]  # NEW: where each skipped constraint puts the value
    moves: tuple[QuantNode, ...]  # SEEN: constraints where the value is re-entered
    visit: list[str] | None = None  # the monitor's: the tool's other constraints, in order


@dataclass(slots=True)
class Settled:
    """Per (signature, kind): the members known to skip, and those known not to."""

    entries: dict[str, Any] = field(default_factory=dict)  # name -> Join | QuantNode | None
    refused: set[str] = field(default_factory=set)
    summary: Skips | None = None
    clear_of: Route | None = None  # the route whose all-clear letter this settles (below)


@dataclass(frozen=True, slots=True)
class RouteLayout:
    """A route's shape, fixed by the members' atoms: which fields a signature reads and
    which members each key may move. Built once per spec for a fresh monitor (kept in its
    :class:`~agentguard.monitor.prototype.MonitorPrototype`) and wired to each run's own
    nodes by :meth:`Router.wire`; the run-time caches live on the :class:`Route`."""

    tool: str
    site: Path | None  # the one field this tool's calls give the variable from (None: none)
    paths: tuple[Path, ...]  # every literal-tested field of the members' atoms of this tool
    literals: tuple[frozenset[Any], ...]  # per path, the keys the members' atoms test for
    members: tuple[str, ...]  # in spec order
    anchors: Mapping[tuple[int, Any], frozenset[str]]
    # (index in paths, key) -> members with an atom that holds only if that field has that
    # key; members with an atom without literal tests are ``open_ended``
    open_ended: frozenset[str]


RouterLayout: TypeAlias = "tuple[RouteLayout, ...]"
"""Every route of a monitor, in the order :meth:`Router.build` makes them."""


@dataclass(slots=True)
class Route:
    """The constraints that one tool's calls reach, with the same sites: how to skip them."""

    tool: str
    site: Path | None  # the one field this tool's calls give the variable from (None: none)
    paths: tuple[Path, ...]  # every literal-tested field of the members' atoms of this tool
    literals: tuple[frozenset[Any], ...]  # per path, the keys the members' atoms test for
    members: dict[str, QuantNode]  # the undecided ones, in spec order
    anchors: Mapping[tuple[int, Any], frozenset[str]] = field(default_factory=dict)
    # (index in paths, key) -> members with an atom that holds only if that field has that
    # key; members with an atom without literal tests are ``open_ended``
    open_ended: frozenset[str] = frozenset()
    candidates: dict[Signature, frozenset[str]] = field(default_factory=dict)
    letters: dict[tuple[str, Signature, bool], tuple[Letter, Letter | None] | None] = field(
        default_factory=dict
    )  # (name, signature, mentions a value) -> (every value's letter, that value's)
    settled: dict[tuple[Signature, int], Settled] = field(default_factory=dict)
    clear: dict[int, Settled] = field(default_factory=dict)
    # per kind, the members under the all-clear letter: the same for every signature that
    # makes none of their atoms hold, so a new signature settles only its candidates


class Plan:
    """One call's routing: the constraints to skip, and the instance updates they stand for."""

    __slots__ = ("parts", "skip")

    def __init__(self, parts: list[tuple[Skips, Any, Any]]) -> None:
        self.parts = parts  # (what is skipped, the value's key, the value) per route
        self.skip: frozenset[str] = (
            parts[0][0].skip if len(parts) == 1 else frozenset().union(*(p[0].skip for p in parts))
        )

    def commit(self) -> None:
        """Do what stepping the skipped constraints would have done to their instances:
        a new value joins its group; a seen value whose own letter loops is re-entered
        (last in its group, the call's value kept), as stepping re-enters it."""
        for skips, key, value in self.parts:
            for values, where, group in skips.joins:
                values[key] = value
                where[key] = group
            for node in skips.moves:
                group = node.where[key]  # the index keeps pointing at it (its order is moot)
                values = group.values
                del values[key]
                if not values:  # stepping drops the emptied group and makes it anew
                    gkey = (group.state, group.in_domain)
                    del node.groups[gkey]
                    node.groups[gkey] = group
                values[key] = value


class Router:
    """The routes of a monitor's quantified constraints, per tool name."""

    def __init__(self, routes: dict[str, list[Route]]) -> None:
        self._routes = routes
        self._cached: dict[str, list[Settled]] = {}  # name -> the entries that mention it
        for rs in routes.values():
            for r in rs:
                for name, node in r.members.items():
                    node.watcher = partial(self.forget, name)

    @classmethod
    def build(cls, nodes: Mapping[str, object]) -> Router | None:
        """The router of ``nodes`` (a monitor's undecided ones, in spec order); None when
        none routes."""
        return cls.wire(layout(nodes), nodes)

    @classmethod
    def wire(cls, routes: RouterLayout, nodes: Mapping[str, object]) -> Router | None:
        """The router of ``routes`` over ``nodes`` (those of the layout's members, in the
        states the layout was made for); None when there are no routes."""
        if not routes:
            return None
        out: dict[str, list[Route]] = {}
        for r in routes:
            members = {}
            for name in r.members:
                node = nodes[name]
                if type(node) is not QuantNode:  # pragma: no cover - a layout of other nodes
                    raise TypeError(f"route member {name!r} is not a quantified node")
                members[name] = node
            route = Route(r.tool, r.site, r.paths, r.literals, members, r.anchors, r.open_ended)
            out.setdefault(r.tool, []).append(route)
        return cls(out)

    # ------------------------------------------------------------------ caches
    def forget(self, name: str) -> None:
        """``name``'s states changed: what was settled about skipping it no longer holds."""
        for settled in self._cached.pop(name, ()):
            settled.entries.pop(name, None)
            settled.refused.discard(name)
            settled.summary = None
            if settled.clear_of is not None:  # every signature's summary read it
                for other in settled.clear_of.settled.values():
                    other.summary = None

    def retire(self, name: str) -> None:
        """``name`` is decided: the monitor steps it no more, nor does it route it."""
        self.forget(name)
        for rs in self._routes.values():
            for r in rs:
                node = r.members.pop(name, None)
                if node is not None:
                    node.watcher = None
                    for settled in r.settled.values():
                        settled.summary = None

    # ------------------------------------------------------------------ routing
    def plan(self, call: Call) -> Plan | None:
        """The constraints ``call`` cannot move, and what skipping them commits; None: none."""
        routes = self._routes.get(call.name)
        if routes is None:
            return None
        parts = []
        for r in routes:
            if r.members:
                part = self._route(r, call)
                if part is not None and part[0].skip:
                    parts.append(part)
        return Plan(parts) if parts else None

    def _route(self, r: Route, call: Call) -> tuple[Skips, Any, Any] | None:
        sig = []
        for path, keys in zip(r.paths, r.literals, strict=True):
            got = _key(call, path)
            if got is UNKEYED:
                return None
            sig.append(got if got in keys else UNTESTED)  # a key no atom tests for: all alike
        signature = tuple(sig)
        key: Any = None
        value: Any = MISSING if r.site is None else call_field(call, r.site)
        if value is MISSING:
            kind = NO_VALUE
        else:  # the one value the constraints' sites read: its key (freeze's, for plain data)
            key = _plain(value)
            if key is UNKEYED or key is MISSING:
                return None  # no index mirrors its equality (NaN is a value equal to nothing)
            kind = SEEN if key in next(iter(r.members.values())).where else NEW
        settled = r.settled.get((signature, kind))
        if settled is None:
            settled = r.settled[(signature, kind)] = Settled()
        summary = settled.summary
        if summary is None:
            summary = self._settle(r, settled, call, signature, kind)
        return summary, key, value

    def _settle(
        self, r: Route, settled: Settled, call: Call, signature: Signature, kind: int
    ) -> Skips:
        """Decide the members not decided yet for this signature and kind: its candidates
        here, the others once for every signature (``Route.clear``)."""
        members = r.members
        candidates = self._candidates(r, signature) & members.keys()
        clear = r.clear.get(kind)
        if clear is None:
            clear = r.clear[kind] = Settled(clear_of=r)
        for name in members.keys() - candidates - clear.entries.keys() - clear.refused:
            self._record(clear, name, self._decide(members[name], (r.tool, 0), None, kind))
        entries, refused = settled.entries, settled.refused
        for name in candidates - entries.keys() - refused:
            node = members[name]
            found = self._letters(r, name, node, call, signature, kind != NO_VALUE)
            decided = False if found is None else self._decide(node, *found, kind)
            self._record(settled, name, decided)
        skipped = {n: e for n, e in clear.entries.items() if n not in candidates}
        skipped.update(entries)
        if kind == NEW:
            summary = Skips(frozenset(skipped), tuple(skipped.values()), ())
        else:
            moves = tuple(n for n in skipped.values() if n is not None)
            summary = Skips(frozenset(skipped), (), moves)
        settled.summary = summary
        return summary

    def _record(self, settled: Settled, name: str, decided: Any) -> None:
        if decided is False:
            settled.refused.add(name)
        else:
            settled.entries[name] = decided
        self._cached.setdefault(name, []).append(settled)

    @staticmethod
    def _decide(node: QuantNode, generic: Letter, own: Letter | None, kind: int) -> Any:
        """What skipping ``node`` commits under these letters (a Join for a new value, the
        node when a seen value is re-entered, None for nothing), or False: step it."""
        if node.error:  # pragma: no cover - an erring node is decided (retired)
            return False
        if not node._loops_under(generic):
            return False
        m = node.machine
        if kind == NEW:  # the new value's first state must be a group's already
            group = node.groups.get((m.step(node.fresh, own or generic), True))
            return False if group is None else (group.values, node.where, group)
        if own is None or kind == NO_VALUE:
            return None
        # the seen value is in one of the groups: its own letter must leave it there
        if all(m.step(g.state, own) == g.state for g in node.groups.values()):
            return node
        return False

    def _candidates(self, r: Route, signature: Signature) -> frozenset[str]:
        """The members with an atom of the class that a call of ``signature`` may make true."""
        found = r.candidates.get(signature)
        if found is None:
            out = set(r.open_ended)
            for i, key in enumerate(signature):
                out.update(r.anchors.get((i, key), ()))
            found = r.candidates[signature] = frozenset(out)
        return found

    def _letters(
        self, r: Route, name: str, node: QuantNode, call: Call, signature: Signature, keyed: bool
    ) -> tuple[Letter, Letter | None] | None:
        """The letter every value gets from a call of this signature, and the mentioned
        value's (None: no other); None when they are not one letter each."""
        k = (name, signature, keyed)
        if k in r.letters:
            return r.letters[k]
        found = None
        letters = node._letters.letters(call, pending=False) if node._letters else None
        if letters is not None and len(letters.generic) == 1 and len(letters.special) <= 1:
            own = next(iter(letters.special.values()), None)
            if own is None or len(own) == 1:
                found = (letters.generic[0], own[0] if own else None)
        r.letters[k] = found
        return found


def layout(nodes: Mapping[str, object]) -> RouterLayout:
    """The routes of ``nodes`` (a monitor's undecided ones, in spec order), from their
    atoms and, for a restored monitor, whether the members have seen the same values."""
    by_key: dict[tuple[str, Any], dict[str, QuantNode]] = {}
    for name, node in nodes.items():
        if type(node) is not QuantNode or not _routable(node):
            continue
        for tool in node.names or ():
            if _class_literals(node, tool) is not None:
                by_key.setdefault((tool, node._touch_key), {})[name] = node
    routes: list[RouteLayout] = []
    for (tool, _), members in by_key.items():
        if not _agree(members):
            continue
        first = next(iter(members.values()))
        sites = {p for t, p, _ in first.plan.sites if t == tool}
        paths: set[Path] = set()
        for node in members.values():
            paths.update(_class_literals(node, tool) or ())
        ordered = tuple(sorted(paths, key=repr))
        keys: list[set[Any]] = [set() for _ in ordered]
        anchors: dict[tuple[int, Any], set[str]] = {}
        open_ended = set()
        for name, node in members.items():
            for literal in _class_tests(node, tool):
                for path, key in literal:
                    keys[ordered.index(path)].add(key)
                if not literal:
                    open_ended.add(name)
                else:
                    path, key = literal[0]
                    anchors.setdefault((ordered.index(path), key), set()).add(name)
        routes.append(
            RouteLayout(
                tool,
                next(iter(sites), None),
                ordered,
                tuple(frozenset(k) for k in keys),
                tuple(members),
                MappingProxyType({k: frozenset(v) for k, v in anchors.items()}),
                frozenset(open_ended),
            )
        )
    return tuple(routes)


def _routable(node: QuantNode) -> bool:
    """Values followed one pass per call, every one in the domain, from at most one
    field per tool."""
    if node._letters is None or node._touch_key is None or node.fixed is not None:
        return False
    if node.names is None or node.degraded or node.error or node._contains:
        return False
    per_tool: dict[str, set[Path]] = {}
    for tool, path, elements in node.plan.sites:
        if tool is None or elements:
            return False
        per_tool.setdefault(tool, set()).add(path)
    return all(len(paths) == 1 for paths in per_tool.values())


def _class_tests(node: QuantNode, tool: str) -> list[tuple[tuple[Path, Any], ...]]:
    """The literal tests of each atom of ``tool``'s class (a routed node has only those)."""
    plan = node._letters
    cls = plan.classes.get(tool) if plan is not None else None
    if cls is None:  # pragma: no cover - checked by _class_literals
        return []
    tests = [a.literal for a in cls.plain] + [a.literal for a in cls.keyed]
    return [t for t in tests if t is not None]


def _class_literals(node: QuantNode, tool: str) -> set[Path] | None:
    """The fields the atoms of ``tool``'s class test against literals, or None when one
    of them tests anything else (then its letters are not known from the literals)."""
    plan = node._letters
    if plan is None:  # pragma: no cover - checked by _routable
        return None
    cls = plan.classes.get(tool)
    if cls is None:
        return None
    paths: set[Path] = set()
    for literal in [*(a.literal for a in cls.plain), *(a.literal for a in cls.keyed)]:
        if literal is None:
            return None
        paths.update(p for p, _ in literal)
    return paths


def _plain(value: Any) -> Any:
    """:func:`plain_key`, with its most common answers first."""
    t = type(value)
    return value if t is int or t is str else plain_key(value)


def _key(call: Call, path: Path) -> Any:
    """The key of a call field, as :func:`~agentguard.monitor.value_letters.field_key`."""
    got = call_field(call, path)
    return MISSING if got is MISSING else _plain(got)


def _agree(members: Mapping[str, QuantNode]) -> bool:
    """Have the members seen the same values, every one in the domain? (always true on a
    fresh monitor; a restored one is checked)."""
    keys = None
    for node in members.values():
        if any(not g.in_domain for g in node.groups.values()):
            return False
        if keys is None:
            keys = node.where.keys()
        elif node.where.keys() != keys:
            return False
    return True


__all__ = ["Plan", "Route", "RouteLayout", "Router", "RouterLayout", "layout"]
