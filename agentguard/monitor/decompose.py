"""Bounded construction: a conjunction of independent obligations is monitored in parts.

One machine for ``F t0 & … & F t39`` has 2^40 reachable states: the first verdict
question alone explores the 5,000-state budget and gives up. The conjuncts share no tool,
so the compiler groups the top-level conjuncts by shared tool names and compiles one
machine per group; the constraint's verdict is the Kleene conjunction of the parts.

When is that exact and earliest? Kleene ``and`` is always sound (a part VIOLATED breaks
the whole; all parts SATISFIED satisfy it). It is also earliest when every part *ignores
the others' calls*: each part's automaton loops on a call to a tool it does not mention
(the letter ``OTHER``) in every reachable state, and reads no call counts. Then the
continuations that satisfy each part can be concatenated, and each part sees only its own
calls in the concatenation, so the whole is satisfiable iff every part is. That is checked
on each part's (small) automaton here.

A part that does read the others' calls (``N false``, a strong ``X`` over a foreign call,
a call budget) breaks the argument; then the whole formula is compiled as one machine
when the parts' product is small, and otherwise the split is kept with a ``late`` note:
verdicts stay sound but a violation that needs the parts together shows only at the end
(``agentguard lint`` reports it as ``late``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Final

from agentguard.language import ast as A
from agentguard.monitor.atoms import EventAtom, FrozenAtom
from agentguard.monitor.machine import OTHER, Machine
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, Plan

PROBE_STATES: Final = 512
"""States explored per part to check that it ignores foreign calls (else: not exact)."""
MAX_JOINT: Final = 1_000
"""Largest product of the parts' state counts compiled as one machine when the split
would not be exact."""


def conjuncts(f: A.Formula) -> list[A.Formula]:
    """The top-level conjuncts of ``f``, left to right."""
    out: list[A.Formula] = []
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, A.And):
            stack.append(g.right)
            stack.append(g.left)
        else:
            out.append(g)
    return out


def split_conjunction(f: A.Formula, build: Callable[[A.Formula], Machine]) -> Plan:
    """The plan of a quantifier-free formula: one machine, or independent parts (above)."""
    parts = conjuncts(f)
    if len(parts) < 2:
        return AutomatonPlan(build(f))
    machines = [build(p) for p in parts]
    groups = _groups(machines)
    if len(groups) < 2:
        return AutomatonPlan(build(f))
    plans: list[Plan] = []
    sizes: list[int | None] = []
    exact = True
    for members in groups:
        m = machines[members[0]] if len(members) == 1 else build(_and([parts[i] for i in members]))
        size, ignores_others = _probe(m)
        exact = exact and ignores_others
        sizes.append(size)
        plans.append(AutomatonPlan(m))
    if exact:
        return BoolPlan("and", tuple(plans), split=True)
    product = 1
    for size in sizes:
        product = product * size if size is not None and product <= MAX_JOINT else MAX_JOINT + 1
    if product <= MAX_JOINT:
        return AutomatonPlan(build(f))
    late = (
        f"a conjunction of {len(groups)} independent parts, too large to monitor as one: "
        "each part is monitored on its own, so a violation that needs several parts "
        "together may be found only at the end"
    )
    return BoolPlan("and", tuple(plans), split=True, late=late)


def _and(formulas: list[A.Formula]) -> A.Formula:
    out = formulas[0]
    for g in formulas[1:]:
        out = A.And(out, g)
    return out


def _groups(machines: list[Machine]) -> list[list[int]]:
    """Conjunct indices grouped by shared tool names; a conjunct with an atom that any
    tool can make true (no tool name) shares with every other."""
    parent = list(range(len(machines)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        parent[find(i)] = find(j)

    owner: dict[str, int] = {}
    for i, m in enumerate(machines):
        if any(isinstance(a, EventAtom) and a.tool is None for a in m.atoms):
            for j in range(len(machines)):
                union(i, j)
        for name in m.names:
            if name in owner:
                union(i, owner[name])
            else:
                owner[name] = i
    out: dict[int, list[int]] = {}
    for i in range(len(machines)):
        out.setdefault(find(i), []).append(i)
    return list(out.values())


def _probe(m: Machine) -> tuple[int | None, bool]:
    """(reachable states or None past the probe, whether every one ignores foreign calls)."""
    letters = m.all_letters()
    if letters is None:
        return None, False
    ignores = not m._data[OTHER] and not any(
        isinstance(a, FrozenAtom) and a.metric for a in m.atoms
    )
    seen = {m.init}
    queue = deque([m.init])
    while queue:
        state = queue.popleft()
        if ignores and m.step(state, (OTHER, 0)) != state:
            ignores = False
        for letter in letters:
            nxt = m.step(state, letter)
            if nxt not in seen:
                if len(seen) >= PROBE_STATES:
                    return None, False
                seen.add(nxt)
                queue.append(nxt)
    return len(seen), ignores
