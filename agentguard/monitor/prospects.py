"""What one constraint still asks of the rest of a run, per tool: at least how many more
calls it needs, at most how many more it admits.

A call can break no constraint and still leave a run that no continuation can make
compliant: ``tool_d`` called early is allowed by ``CalledN(tool_d, 1, =)`` and by an
order constraint that wants ``tool_d`` after three ``tool_b``, but afterwards the one
wants no more ``tool_d`` and the other one more. Each constraint alone is still
satisfiable; their conjunction is not. The check of a single constraint (``propose``'s
verdicts) cannot see it; comparing what the constraints ask of each tool can, cheaply:
if one needs at least ``n`` more calls of a tool and another admits at most ``m < n``,
no run satisfies both.

On a machine state (monitor/stepping.py) the two numbers are path problems on the graph
of states reachable from it: the *need* of a tool is the fewest letters of its name class
on a path to an accepting state (a 0-1 shortest path), its *room* the most (a longest
path, unbounded when a letter of that class lies on a cycle that can still accept). Data
atoms are left free (every bit combination is a letter), so both over-approximate what
real calls can do: the need can only be smaller and the room larger than the truth, and
a conflict found is a real one. A machine with frozen atoms (a user predicate, a metric),
too large to explore within :data:`MAX_STATES`, or with too many letters, says nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from agentguard.monitor.atoms import FrozenAtom
from agentguard.monitor.machine import Machine
from agentguard.monitor.stepping import NameClass

MAX_STATES: Final = 2_000
"""States explored per start state; past it the machine says nothing from that state."""


@dataclass(frozen=True, slots=True)
class Prospect:
    """From one machine state: per name class, the fewest further letters of it any
    accepting continuation has (``need``) and the most (``room``; absent: unbounded)."""

    need: Mapping[NameClass, int]
    room: Mapping[NameClass, int]


_MEMO: dict[int, tuple[Machine, dict[int, Prospect | None]]] = {}
"""Answers per machine (by identity; the machine is kept so its id is not reused)."""


def prospect(machine: Machine, state: int) -> Prospect | None:
    """The prospect of ``machine`` from ``state`` (memoised: machines and their states
    are shared and immutable), or None when the machine says nothing (see the module)."""
    entry = _MEMO.get(id(machine))
    if entry is None or entry[0] is not machine:
        entry = _MEMO[id(machine)] = (machine, {})
    answers = entry[1]
    if state in answers:
        return answers[state]
    found = answers[state] = _prospect(machine, state)
    return found


def _prospect(machine: Machine, state: int) -> Prospect | None:
    if machine.too_large or any(isinstance(a, FrozenAtom) for a in machine.atoms):
        return None
    letters = machine.all_letters()
    if letters is None:
        return None
    edges: dict[int, list[tuple[NameClass, int]]] = {}
    queue = deque([state])
    while queue:
        node = queue.popleft()
        if node in edges:
            continue
        if len(edges) >= MAX_STATES:
            return None
        out = [(letter[0], machine.step(node, letter)) for letter in letters]
        edges[node] = out
        queue.extend(succ for _, succ in out if succ not in edges)
    accepting = {n for n in edges if machine.accepts(n)}
    if not accepting:
        return Prospect({}, {})  # violated for good: propose refuses what comes next
    classes = {cls for out in edges.values() for cls, _ in out}
    need = {cls: _fewest(edges, state, accepting, cls) for cls in classes}
    alive = _co_reachable(edges, accepting)  # every state here is reachable from ``state``
    component = _components(edges, alive)
    room: dict[NameClass, int] = {}
    for cls in classes:
        most = _most(edges, state, accepting, component, cls)
        if most is not None:
            room[cls] = most
    return Prospect({c: n for c, n in need.items() if n}, room)


def _fewest(
    edges: Mapping[int, list[tuple[NameClass, int]]],
    start: int,
    accepting: set[int],
    cls: NameClass,
) -> int:
    """The fewest ``cls`` letters on a path from ``start`` to an accepting state (0-1 BFS)."""
    best = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        cost = best[node]
        if node in accepting:
            return cost
        for letter_cls, succ in edges[node]:
            weight = 1 if letter_cls == cls else 0
            if best.get(succ, cost + weight + 1) > cost + weight:
                best[succ] = cost + weight
                if weight:
                    queue.append(succ)
                else:
                    queue.appendleft(succ)
    return 0  # unreachable: a start with an accepting state reachable always returns


def _co_reachable(
    edges: Mapping[int, list[tuple[NameClass, int]]], accepting: set[int]
) -> set[int]:
    preds: dict[int, list[int]] = {n: [] for n in edges}
    for node, out in edges.items():
        for _, succ in out:
            preds[succ].append(node)
    alive = set(accepting)
    stack = list(accepting)
    while stack:
        for p in preds[stack.pop()]:
            if p not in alive:
                alive.add(p)
                stack.append(p)
    return alive


def _components(
    edges: Mapping[int, list[tuple[NameClass, int]]], alive: set[int]
) -> dict[int, int]:
    """Strongly connected components of the graph on ``alive`` (Tarjan, iterative):
    state -> component number, numbered in reverse topological order (sinks first)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    component: dict[int, int] = {}
    counter = components = 0
    for root in alive:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            out = [s for _, s in edges[node] if s in alive]
            if i < len(out):
                work.append((node, i + 1))
                succ = out[i]
                if succ not in index:
                    work.append((succ, 0))
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
                continue
            if low[node] == index[node]:
                number = components
                components += 1
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = number
                    if member == node:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return component


def _most(
    edges: Mapping[int, list[tuple[NameClass, int]]],
    start: int,
    accepting: set[int],
    component: Mapping[int, int],
    cls: NameClass,
) -> int | None:
    """The most ``cls`` letters on a path from ``start`` to an accepting state; None when
    unbounded (a ``cls`` letter inside a component: a cycle that can still accept, and
    every state of ``component`` is reachable from ``start``)."""
    if start not in component:
        return 0
    members: dict[int, list[int]] = {}
    for node, number in component.items():
        members.setdefault(number, []).append(node)
    best: dict[int, int] = {}  # component -> the most from any of its states (-1: none)
    for number in sorted(members):  # sinks first: successors' answers are known
        most = 0 if any(n in accepting for n in members[number]) else -1
        for node in members[number]:
            for letter_cls, succ in edges[node]:
                other = component.get(succ)
                if other is None:  # cannot accept from there
                    continue
                weight = 1 if letter_cls == cls else 0
                if other == number:
                    if weight:
                        return None
                    continue
                if best[other] >= 0:
                    most = max(most, best[other] + weight)
        best[number] = most
    return max(best[component[start]], 0)
