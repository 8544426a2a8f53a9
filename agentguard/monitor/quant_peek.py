"""A quantifier's verdict after a hypothetical extension, nothing committed.

The general path follows every group's *set* of possible states (a proposed call's result
is unknown, so one call may be several letters) and every value the calls mention; the
fast path handles the usual single proposal whose generic letter moves nothing, looking
only at the values it singles out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from agentguard.errors import AgentGuardError
from agentguard.monitor.atoms import FRESH
from agentguard.monitor.quant_decide import decide, decide_final
from agentguard.monitor.quant_groups import Instances
from agentguard.monitor.quant_sites import may_grow
from agentguard.monitor.state_sets import resolve_frozen, set_final, set_verdict
from agentguard.monitor.verdict import Verdict
from agentguard.trace.model import Call


class Unchanged:
    """The proposal changes neither the verdict nor the truth at the end."""

    __slots__ = ()


UNCHANGED: Final = Unchanged()


class Peeking(Instances):
    """:class:`Instances` that can answer "what if these calls came next?"."""

    def _peek_fast(
        self, call: Call, ending: bool
    ) -> tuple[Verdict, bool | None] | Unchanged | None:
        """One proposed call whose generic letter moves nothing: only the values it gives
        their own letter (or brings into the domain) are looked at. ``UNCHANGED``: the verdict and truth stay; None: not that case."""
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
        grows = may_grow(self.plan, call) and not fixed
        if not extra and not (ending and grows):
            return UNCHANGED
        alive = [g for g in self.groups.values() if len(g.values) > removed.get(id(g), 0)]
        elements = [({g.state}, g.in_domain) for g in alive] + extra
        verdict = decide(
            self.forall,
            ((set_verdict(st, m), inside) for st, inside in elements),
            None if fixed else m.verdict(self.fresh),
        )
        if not ending:
            return verdict, None
        final = decide_final(
            self.forall,
            [(set_final(st, m), inside) for st, inside in elements],
            m.final(self.fresh),
            grows,
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
            grows = grows or may_grow(self.plan, call)
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
        verdict = decide(
            self.forall,
            ((set_verdict(st, m), inside) for st, inside in elements),
            None if fixed else set_verdict(fresh, m),
        )
        final = None
        if ending:
            final = decide_final(
                self.forall,
                [(set_final(st, m), inside) for st, inside in elements],
                set_final(fresh, m),
                grows and not fixed,
            )
        return verdict, final
