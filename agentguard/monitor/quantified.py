"""``forall``/``exists`` over values extracted from the trace, monitored incrementally.

One body machine serves every value. An instance for value ``v`` is created when ``v``
first shows up in the trace (at a field the body tests the variable against, or in
the quantifier's domain). Until then every test on ``v`` compares it with values that
are not ``v``, so all unseen values share one *fresh* state, progressed with the
*generic* letter (the variable bound to a value equal to nothing); a new instance
starts from it. Instances in the same machine state form one group and move together
under the generic letter, so a call costs O(groups + values it mentions), not
O(distinct values); memory is O(distinct values).

Soundness with a growing domain: ``forall`` is SATISFIED only when every instance *and*
the fresh state are (a future value could still fail); ``exists`` is VIOLATED only when
every instance and the fresh state are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor.atoms import FRESH, FrozenAtom
from agentguard.monitor.call_memo import about, hashable
from agentguard.monitor.machine import OTHER, Letter
from agentguard.monitor.persistence import (
    expect_bool,
    expect_list,
    expect_mapping,
    expect_str,
    restore_cstate,
    save_cstate,
)
from agentguard.monitor.plans import QuantPlan
from agentguard.monitor.state_sets import (
    call_doc,
    call_from_doc,
    resolve_frozen,
    set_final,
    set_verdict,
)
from agentguard.monitor.value_letters import LetterPlan, ValueLetters
from agentguard.monitor.verdict import Classification, Enforceability, Verdict
from agentguard.semantics.registry import Registry
from agentguard.semantics.values import MISSING, call_field, flatten_values, freeze, unwrap_result
from agentguard.trace.model import Call


@dataclass(slots=True)
class Group:
    """Instances in the same machine state (and the same domain membership)."""

    state: int
    in_domain: bool
    values: dict[Any, Any] = field(default_factory=dict)  # freeze(v) -> v


class QuantNode:
    """The run-time monitor of ``forall/exists x [in D]: body``."""

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
        self.calls: list[Call] = []
        self.degraded = False
        names = set(self.machine.names)
        names.update(t for t, _, _ in plan.sites if t is not None)
        d = plan.domain
        self._all_calls = any(t is None for t, _, _ in plan.sites)
        if isinstance(d, A.Domain):
            if d.tool is None:
                self._all_calls = True
            else:
                names.add(d.tool)
        self._names = frozenset(names)
        # one pass per call for every value (monitor/value_letters.py), when the body allows
        self._letters = None if self._contains else LetterPlan.build(self.machine, plan.var)
        self._verdict: Verdict | None = None  # caches, dropped whenever a state moves
        self._final: tuple[bool | None] | None = None
        self._stable: bool | None = None
        self._loops: dict[Letter, bool] = {}
        touch_key = ("touched", plan.sites, plan.domain)
        self._touch_key = touch_key if d is None and hashable(touch_key) else None
        if isinstance(d, A.ListLiteral):
            values = flatten_values(
                [x.value if isinstance(x, A.Literal) else MISSING for x in d.items]
            )
            self.fixed = {freeze(v): v for v in values}
            for key, v in self.fixed.items():
                state = self._new_instance(v)
                self._insert(key, v, state, True)

    # ------------------------------------------------------------------ helpers
    @property
    def names(self) -> frozenset[str] | None:
        if self._all_calls or self.machine._data[OTHER]:
            return None
        return self._names

    @property
    def counts(self) -> bool:
        return False  # budgets in a quantified body are read at the end (metrics record)

    def stable(self) -> bool:
        if self._stable is None:
            self._stable = self._loops_under((OTHER, 0))
        return self._stable

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

    def _new_instance(self, value: Any) -> int:
        try:
            return resolve_frozen(
                self.machine, self.fresh, {self.plan.var: value}, self.registry, None
            )
        except AgentGuardError as exc:
            self.error = self.error or str(exc)
            self._changed()
            return self.fresh

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

    def _site_values(self, call: Call) -> list[Any]:
        out: list[Any] = []
        for tool, path, elements in self.plan.sites:
            if tool is not None and tool != call.name:
                continue
            v = call_field(call, path)
            if v is MISSING:
                continue
            if elements and isinstance(v, (list, tuple)):
                out.extend(v)
            else:
                out.append(v)
            if path == ("result",):
                inner = unwrap_result(v)
                if inner is not MISSING:
                    out.append(inner)
        return out

    def _domain_values(self, call: Call, sites: list[Any]) -> list[Any]:
        d = self.plan.domain
        if d is None:
            return sites
        if isinstance(d, A.ListLiteral):
            return []
        if d.tool is not None and d.tool != call.name:
            return []
        if d.extractor == "tools":
            return [call.name]
        if d.extractor == "args":
            v = call_field(call, d.path) if d.path else list(call.args.values())
        else:
            v = call_field(call, ("result", *d.path))
        return flatten_values([v])

    def _touched(self, call: Call) -> dict[Any, tuple[Any, bool]]:
        """Values this call mentions: key -> (value, enters the domain); shared with every
        constraint over the same fields (monitor/call_memo.py). Read-only."""
        if self._touch_key is None:
            return self._touched_now(call)
        return about(call, self._touch_key, lambda: self._touched_now(call))

    def _touched_now(self, call: Call) -> dict[Any, tuple[Any, bool]]:
        sites = self._site_values(call)
        domain = self._domain_values(call, sites)
        out: dict[Any, tuple[Any, bool]] = {}
        for v in sites:
            if v is not MISSING:
                out.setdefault(freeze(v), (v, False))
        for v in domain:
            out[freeze(v)] = (v, True)
        if self.fixed is not None:
            out = {k: (v, True) for k, (v, _) in out.items() if k in self.fixed}
        return out

    # ------------------------------------------------------------------ commit
    def step(self, call: Call) -> None:
        if self._contains:
            self.calls.append(call.at(len(self.calls)))
            if not self.degraded and self._opaque_contains(call):
                self.degraded = True
        if self.degraded:
            self._changed()
            return
        try:
            if self._letters is not None:
                letters = self._letters.letters(call, pending=False)
                if letters is not None:
                    self._step_fast(call, letters)
                    return
            self._step(call)
        except AgentGuardError as exc:
            self.error = self.error or str(exc)
            self._changed()

    def _step_fast(self, call: Call, letters: ValueLetters) -> None:
        """:meth:`_step` from letters computed once for every value: a value the call
        gives the generic letter moves with its group and costs nothing."""
        m = self.machine
        generic = letters.generic[0]
        moving: list[tuple[Any, Any, int, bool]] = []
        for key, (value, enters) in self._touched(call).items():
            g = self.where.get(key)
            own = letters.special.get(key)
            if g is not None and own is None and (g.in_domain or not enters):
                continue
            if g is not None:
                self._detach(key)
                start, inside = g.state, g.in_domain or enters
            else:
                start, inside = self.fresh, enters
            moving.append((key, value, m.step(start, own[0] if own else generic), inside))
        if not self._loops_under(generic):
            self._regroup(generic)
        for key, value, state, inside in moving:
            self._insert(key, value, state, inside)

    def _may_grow(self, call: Call) -> bool:
        """Could the domain gain values from this call's result, still unknown?"""
        if call.has_result:
            return False
        d = self.plan.domain
        if isinstance(d, A.Domain):
            return d.extractor == "results" and (d.tool is None or d.tool == call.name)
        if d is None:  # the active domain includes the result fields the body tests
            return any(
                path[:1] == ("result",) and (tool is None or tool == call.name)
                for tool, path, _ in self.plan.sites
            )
        return False

    def _opaque_contains(self, call: Call) -> bool:
        """Does a `contains x` site of this call hold something other than a list?"""
        for tool, path, elements in self.plan.sites:
            if elements and (tool is None or tool == call.name):
                v = call_field(call, path)
                if v is not MISSING and not isinstance(v, (list, tuple)):
                    return True
        return False

    def _offline(self, calls: Sequence[Call], metrics: Mapping[str, Any]) -> bool:
        from agentguard.semantics.evaluator import Evaluator
        from agentguard.trace.model import Trace

        f = self.plan.formula
        if f is None:  # pragma: no cover - the compiler always sets it
            return False
        trace = Trace(tuple(calls), dict(metrics))
        return Evaluator(trace, registry=self.registry, match=self.machine.match).holds(f)

    def _step(self, call: Call) -> None:
        m = self.machine
        touched = self._touched(call)
        moving: list[tuple[Any, Any, int, bool]] = []
        for key, (value, enters) in touched.items():
            if key in self.where:
                g = self._detach(key)
                moving.append((key, value, g.state, g.in_domain or enters))
            else:
                moving.append((key, value, self._new_instance(value), enters))
        self._regroup(m.letters_of(call, {self.plan.var: FRESH}, pending=False)[0])
        for key, value, state, in_domain in moving:
            letter = m.letters_of(call, {self.plan.var: value}, pending=False)[0]
            self._insert(key, value, m.step(state, letter), in_domain)

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

    # ------------------------------------------------------------------ verdicts
    def _decide(self, elements: Iterable[tuple[Verdict, bool]], fresh: Verdict | None) -> Verdict:
        """elements: (verdict, in domain); fresh None when the domain cannot grow."""
        members: list[Verdict] = []
        others: list[Verdict] = []
        for v, inside in elements:
            (members if inside else others).append(v)
        everyone = [*members, *others, *([fresh] if fresh is not None else [])]
        if self.forall:
            if Verdict.VIOLATED in members:
                return Verdict.VIOLATED
            return (
                Verdict.SATISFIED
                if all(v is Verdict.SATISFIED for v in everyone)
                else Verdict.PENDING
            )
        if Verdict.SATISFIED in members:
            return Verdict.SATISFIED
        return Verdict.VIOLATED if all(v is Verdict.VIOLATED for v in everyone) else Verdict.PENDING

    def _decide_final(
        self, elements: Iterable[tuple[bool | None, bool]], fresh: bool | None, grows: bool
    ) -> bool | None:
        values = [v for v, inside in elements if inside]
        maybe = [v for v, inside in elements if not inside] + ([fresh] if grows else [])
        if self.forall:
            if False in values:
                return False
            if None in values or (maybe and any(v is not True for v in maybe)):
                return None
            return True
        if True in values:
            return True
        if None in values or (maybe and any(v is not False for v in maybe)):
            return None
        return False

    def verdict(self) -> Verdict:
        if self._verdict is None:
            self._verdict = self._compute_verdict()
        return self._verdict

    def _compute_verdict(self) -> Verdict:
        if self.degraded:
            return Verdict.PENDING
        if self.error:
            return Verdict.VIOLATED
        m = self.machine
        fresh = None if self.fixed is not None else m.verdict(self.fresh)
        return self._decide(
            ((m.verdict(g.state), g.in_domain) for g in self.groups.values()), fresh
        )

    def final(self) -> bool | None:
        if self._final is None:
            self._final = (self._compute_final(),)
        return self._final[0]

    def _compute_final(self) -> bool | None:
        if self.degraded:
            return None
        if self.error:
            return False
        m = self.machine
        return self._decide_final(
            ((m.final(g.state), g.in_domain) for g in self.groups.values()), None, False
        )

    def finish(self, metrics: Mapping[str, Any]) -> bool:
        if self.degraded:
            try:
                return self._offline(self.calls, metrics)
            except AgentGuardError as exc:
                self.error = str(exc)
                self._changed()
                return False
        if self.error:
            return False
        m = self.machine
        values: list[bool] = []
        try:
            for g in self.groups.values():
                if not g.in_domain:
                    continue
                if any(isinstance(m.atoms[i], FrozenAtom) for i in m.frozen_in(g.state)):
                    for v in g.values.values():
                        s = resolve_frozen(m, g.state, {self.plan.var: v}, self.registry, metrics)
                        values.append(m.accepts(s))
                else:
                    values.append(m.accepts(g.state))
        except AgentGuardError as exc:
            self.error = str(exc)
            self._changed()
            return False
        return all(values) if self.forall else any(values)

    def peek(
        self, calls: Sequence[Call], ending: bool, errors: list[str]
    ) -> tuple[Verdict, bool | None]:
        if self.degraded or (self._contains and any(self._opaque_contains(c) for c in calls)):
            return Verdict.PENDING, None
        if self.error:
            return Verdict.VIOLATED, False
        try:
            if len(calls) == 1 and self._letters is not None:
                found = self._peek_fast(calls[0], ending)
                if found is not None:
                    return found
            return self._peek(calls, ending, errors)
        except AgentGuardError as exc:
            errors.append(str(exc))
            return Verdict.VIOLATED, False

    def _peek_fast(self, call: Call, ending: bool) -> tuple[Verdict, bool | None] | None:
        """One proposed call whose generic letter moves nothing: only the values it gives
        their own letter (or brings into the domain) are looked at. None: not that case."""
        assert self._letters is not None
        letters = self._letters.letters(call, pending=True)
        if letters is None or len(letters.generic) != 1:
            return None
        if not self._loops_under(letters.generic[0]):
            return None
        m = self.machine
        removed: dict[int, int] = {}
        extra: list[tuple[set[int], bool]] = []
        for key, (_, enters) in self._touched(call).items():
            g = self.where.get(key)
            own = letters.special.get(key)
            if g is not None and own is None and (g.in_domain or not enters):
                continue
            start = g.state if g is not None else self.fresh
            if g is not None:
                removed[id(g)] = removed.get(id(g), 0) + 1
            inside = (g is not None and g.in_domain) or enters
            extra.append(({m.step(start, x) for x in (own or letters.generic)}, inside))
        fixed = self.fixed is not None
        grows = self._may_grow(call) and not fixed
        if not extra and not (ending and grows):
            return self.verdict(), (self.final() if ending else None)
        alive = [g for g in self.groups.values() if len(g.values) > removed.get(id(g), 0)]
        elements = [({g.state}, g.in_domain) for g in alive] + extra
        verdict = self._decide(
            ((set_verdict(st, m), inside) for st, inside in elements),
            None if fixed else m.verdict(self.fresh),
        )
        if not ending:
            return verdict, None
        final = self._decide_final(
            [(set_final(st, m), inside) for st, inside in elements], m.final(self.fresh), grows
        )
        return verdict, final

    def _peek(
        self, calls: Sequence[Call], ending: bool, errors: list[str]
    ) -> tuple[Verdict, bool | None]:
        m = self.machine
        var = self.plan.var
        group_states: dict[int, set[int]] = {id(g): {g.state} for g in self.groups.values()}
        removed: dict[int, int] = {}
        overlay: dict[Any, tuple[Any, set[int], bool]] = {}
        fresh = {self.fresh}
        grows = False
        for call in calls:
            touched = self._touched(call)
            grows = grows or self._may_grow(call)
            for key, (value, enters) in touched.items():
                if key in overlay:
                    v0, st, inside = overlay[key]
                    overlay[key] = (v0, st, inside or enters)
                elif key in self.where:
                    g = self.where[key]
                    removed[id(g)] = removed.get(id(g), 0) + 1
                    overlay[key] = (value, set(group_states[id(g)]), g.in_domain or enters)
                else:
                    states = set()
                    for f in fresh:
                        try:
                            states.add(resolve_frozen(m, f, {var: value}, self.registry, None))
                        except AgentGuardError as exc:
                            errors.append(str(exc))
                            return Verdict.VIOLATED, False
                    overlay[key] = (value, states, enters)
            generic = m.letters_of(call, {var: FRESH}, pending=True)
            for gid, states in group_states.items():
                group_states[gid] = {m.step(s, letter) for s in states for letter in generic}
            fresh = {m.step(s, letter) for s in fresh for letter in generic}
            for key, (value, states, inside) in overlay.items():
                letters = (
                    m.letters_of(call, {var: value}, pending=True) if key in touched else generic
                )
                overlay[key] = (
                    value,
                    {m.step(s, letter) for s in states for letter in letters},
                    inside,
                )
        alive = [g for g in self.groups.values() if len(g.values) > removed.get(id(g), 0)]
        elements = [(group_states[id(g)], g.in_domain) for g in alive]
        elements += [(states, inside) for _, states, inside in overlay.values()]
        fixed = self.fixed is not None
        verdict = self._decide(
            ((set_verdict(st, m), inside) for st, inside in elements),
            None if fixed else set_verdict(fresh, m),
        )
        final = None
        if ending:
            final = self._decide_final(
                [(set_final(st, m), inside) for st, inside in elements],
                set_final(fresh, m),
                grows and not fixed,
            )
        return verdict, final

    # ------------------------------------------------------------------ hints
    def hint(self, proposed: Call, *, ending: bool) -> str:
        """What would satisfy a ``forall`` that ``proposed`` (or ending after it) breaks,
        for the value that breaks it: ``call lookup_order(order_id = "A1") before ...``."""
        if self.degraded or self.error or not self.forall:
            return ""
        m = self.machine
        var = self.plan.var
        candidates: list[tuple[Any, int]] = []
        for key, (value, _) in self._touched(proposed).items():
            g = self.where.get(key)
            try:
                state = g.state if g is not None else self._instance_of(value)
            except AgentGuardError:
                continue
            candidates.append((value, state))
        if ending:  # an instance the run would leave unsatisfied, though not touched now
            for g in self.groups.values():
                if g.in_domain and m.final(g.state) is False:
                    candidates.extend((v, g.state) for v in list(g.values.values())[:1])
        for value, state in candidates:
            env = {var: value}
            then = m.letters_of(proposed, env, pending=True)
            after = [m.step(state, letter) for letter in then]
            broken = (
                any(m.final(s) is False for s in after)
                if ending
                else all(m.verdict(s) is Verdict.VIOLATED for s in after)
            )
            if not broken:
                continue
            route = m.repair(state, then, ending=ending)
            if route:
                steps = " then ".join(m.describe(letter, env) for letter in route)
                return (
                    f"call {steps} before {'finishing' if ending else f'calling {proposed.name}'}"
                )
        return ""

    def _instance_of(self, value: Any) -> int:
        return resolve_frozen(self.machine, self.fresh, {self.plan.var: value}, self.registry, None)

    def over_budget(self) -> bool:
        return self.machine.too_large

    def classify(self) -> Classification:
        body = self.machine.classify()
        if self.forall and body.kind is Enforceability.SAFETY:
            return Classification(Enforceability.SAFETY, False, "forall over a safety body")
        return Classification(Enforceability.MIXED, False, "quantified: at least mixed")

    # ------------------------------------------------------------------ state files
    def save(self) -> dict[str, Any]:
        m = self.machine
        return {
            "fresh": save_cstate(m, self.fresh),
            "groups": [
                {
                    "state": save_cstate(m, g.state),
                    "in_domain": g.in_domain,
                    "values": list(g.values.values()),
                }
                for g in self.groups.values()
            ],
            "error": self.error,
            "calls": [call_doc(c) for c in self.calls],
            "degraded": self.degraded,
        }

    def restore(self, doc: Mapping[str, Any]) -> None:
        m = self.machine
        doc = expect_mapping(doc, "a quantified constraint's state")
        self.fresh = restore_cstate(m, doc.get("fresh"))
        self.groups, self.where = {}, {}
        for gd in expect_list(doc.get("groups"), "instance groups"):
            gd = expect_mapping(gd, "an instance group")
            state = restore_cstate(m, gd.get("state"))
            in_domain = expect_bool(gd.get("in_domain"), "in_domain")
            for v in expect_list(gd.get("values"), "an instance group's values"):
                self._insert(freeze(v), v, state, in_domain)
        self.error = expect_str(doc.get("error"), "error", optional=True)
        calls = expect_list(doc.get("calls", []), "kept calls")
        self.calls = [call_from_doc(d, i) for i, d in enumerate(calls)]
        self.degraded = expect_bool(doc.get("degraded", False), "degraded")
        self._changed()
