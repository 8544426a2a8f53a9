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

The parts, by job: what a call mentions (:mod:`~agentguard.monitor.quant_sites`), the
letters it gives every value in one pass (:mod:`~agentguard.monitor.value_letters`), the
groups and how they move (:mod:`~agentguard.monitor.quant_groups`), hypothetical
extensions (:mod:`~agentguard.monitor.quant_peek`) and the Kleene combination
(:mod:`~agentguard.monitor.quant_decide`); this module is the node the monitor drives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.walk import subformulas
from agentguard.monitor.atoms import FRESH, FrozenAtom, term_value, uses_metrics
from agentguard.monitor.machine import OTHER
from agentguard.monitor.persistence import (
    expect_bool,
    expect_list,
    expect_mapping,
    expect_str,
    restore_cstate,
    save_cstate,
)
from agentguard.monitor.plans import QuantPlan
from agentguard.monitor.quant_decide import decide, decide_final
from agentguard.monitor.quant_peek import Peeking, Unchanged
from agentguard.monitor.quant_sites import opaque_contains
from agentguard.monitor.state_sets import (
    call_doc,
    call_from_doc,
    resolve_frozen,
)
from agentguard.monitor.value_letters import ValueLetters
from agentguard.monitor.verdict import Classification, Enforceability, Verdict
from agentguard.semantics.registry import Registry
from agentguard.semantics.values import flatten_values, freeze
from agentguard.trace.model import Call

DEFERRED_CONTAINS = (
    "a `contains` test against the quantified value: where the field holds text, it is "
    "checked at the end of the run, not before the call (write `PATH from SOURCE`)"
)


def reads_metrics(f: A.Formula) -> bool:
    """Does ``f`` read the metrics record anywhere (known only when the run ends)?"""
    for node in subformulas(f):
        if isinstance(node, (A.Compare, A.UserPredicate)) and uses_metrics(node):
            return True
        if isinstance(node, A.Event) and any(uses_metrics(t.value) for t in node.tests):
            return True
    return False


class QuantNode(Peeking):
    """The run-time monitor of ``forall/exists x [in D]: body``."""

    def __init__(self, plan: QuantPlan, registry: Registry) -> None:
        super().__init__(plan, registry)
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
        if isinstance(d, A.ListLiteral):
            # every item, lists and maps too, as the evaluator reads them (compile_plan
            # sent a list holding a variable or a metric to the fallback)
            values = flatten_values([term_value(x, {}) for x in d.items])
            self.fixed = {freeze(v): v for v in values}
            for key, v in self.fixed.items():
                state = self._new_instance(v)
                self._insert(key, v, state, True)

    def clone(self) -> QuantNode:
        """This node in its current state (:meth:`Instances.clone`), its kept calls too."""
        new = super().clone()
        new.calls = list(self.calls)
        new.degraded = self.degraded
        new._all_calls = self._all_calls
        new._names = self._names
        return new

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

    # ------------------------------------------------------------------ commit
    def step(self, call: Call) -> None:
        if self._contains:
            self.calls.append(call.at(len(self.calls)))
            if not self.degraded and opaque_contains(self.plan, call):
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

    # ------------------------------------------------------------------ verdicts
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
        return decide(
            self.forall, ((m.verdict(g.state), g.in_domain) for g in self.groups.values()), fresh
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
        return decide_final(
            self.forall,
            ((m.final(g.state), g.in_domain) for g in self.groups.values()),
            None,
            False,
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
        if self.degraded or (self._contains and any(opaque_contains(self.plan, c) for c in calls)):
            return Verdict.PENDING, self._ending_offline(calls, errors) if ending else None
        if self.error:
            return Verdict.VIOLATED, False
        try:
            if len(calls) == 1 and self._letters is not None:
                found = self._peek_fast(calls[0], ending)
                if isinstance(found, Unchanged):
                    return self.verdict(), (self.final() if ending else None)
                if found is not None:
                    return found
            return self._peek(calls, ending, errors)
        except AgentGuardError as exc:
            errors.append(str(exc))
            return Verdict.VIOLATED, False

    def _ending_offline(self, calls: Sequence[Call], errors: list[str]) -> bool | None:
        """Truth if the run ended after ``calls``, for a node the end-of-run fallback
        judges (a `contains` against text): the offline evaluator on the kept calls, so a
        finishing attempt is judged as the end of the run (None where metrics decide)."""
        f = self.plan.formula
        if f is None or reads_metrics(f):
            return None
        kept = [*self.calls, *(c.at(len(self.calls) + k) for k, c in enumerate(calls))]
        try:
            return self._offline(kept, {})
        except AgentGuardError as exc:
            errors.append(str(exc))
            return False

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
        if self._contains and body.kind is not Enforceability.LIVENESS:
            return Classification(Enforceability.MIXED, False, DEFERRED_CONTAINS)
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
