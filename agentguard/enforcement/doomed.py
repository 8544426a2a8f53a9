"""Tools whose call now would leave a run no continuation can make compliant.

``propose`` judges each constraint alone: a call is refused when it definitively violates
one. A call can break none and still doom their conjunction (an early ``tool_d`` under
``CalledN(tool_d, 1, =)`` and an order that wants ``tool_d`` after three ``tool_b``).
Such a call runs, so it is no refusal; but offering it to a model invites a mistake no
later turn can repair. :func:`doomed_tools` finds these calls where the constraints'
automata show it (:mod:`agentguard.monitor.prospects`: one constraint needs more calls of
a tool than another admits), for every argument the call could carry; it is sound (a
tool listed dooms the run whatever its arguments) and incomplete (conflicts between more
than two constraints, or hidden in quantified, counting or user-predicate constraints,
are not seen). ``Firewall.permissions`` marks them (``ToolPermission.doomed``), and
``offer="narrow"`` does not offer them (docs/firewall.md, "What may run now").
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from agentguard.monitor.machine import Machine
from agentguard.monitor.monitor import Monitor
from agentguard.monitor.nodes import AutomatonNode, BoolNode, Node
from agentguard.monitor.prospects import Prospect, prospect
from agentguard.monitor.stepping import OTHER, NameClass
from agentguard.monitor.verdict import Verdict

if TYPE_CHECKING:
    from agentguard.enforcement.core import FirewallCore


MAX_MEMO: Final = 65_536
"""Entries per memo (cleared when full)."""


@dataclass(frozen=True, slots=True)
class _Part:
    """A constraint's automaton (a whole constraint, or a conjunct of one)."""

    constraint: str
    machine: Machine
    state: int


def doomed_tools(fw: FirewallCore, tools: Iterable[str]) -> dict[str, str]:
    """For each of ``tools`` whose call now dooms the run, why (call under the firewall's
    lock). Nothing while calls are in flight (their results are unknown), nor when the
    run is doomed already (then no call is worse than another)."""
    if fw._inflight or fw._stopped or fw._ending:
        return {}
    shape = _shape(fw)
    if not shape.nodes:
        return {}
    final = set(fw.final_tools)
    asked = tuple(t for t in tools if t not in final)  # the end: the obligations' entry
    states = tuple(-1 if node.error or node.budget else node.state for _, node in shape.nodes)
    key = (shape.ids, states, asked)
    found = _ANSWERS.get(key)
    if found is not None and found[0] == shape.machines:
        return found[1]
    verdicts = fw.monitor.verdicts
    parts = [
        _Part(name, node.machine, state)
        for (name, node), state in zip(shape.nodes, states, strict=True)
        if state >= 0 and verdicts.get(name) is not Verdict.VIOLATED  # lost: asks nothing
    ]
    out: dict[str, str] = {}
    if parts and _conflict(parts, None) is None:
        for tool in asked:
            why = _conflict(parts, tool)
            if why is not None:
                out[tool] = why
    if len(_ANSWERS) >= MAX_MEMO:
        _ANSWERS.clear()
    _ANSWERS[key] = (shape.machines, out)
    return out


@dataclass(frozen=True, slots=True)
class _Shape:
    """A monitor's automata that the analysis reads: each constraint's, or each conjunct's
    of a conjunction (``nodes``), their machines and the machines' ids."""

    nodes: tuple[tuple[str, AutomatonNode], ...]
    machines: tuple[Machine, ...]
    ids: tuple[int, ...]


_SHAPES: weakref.WeakKeyDictionary[Monitor, _Shape] = weakref.WeakKeyDictionary()
"""Per monitor (its nodes are its own for its life; only their states move)."""

_ANSWERS: dict[tuple[object, ...], tuple[tuple[Machine, ...], dict[str, str]]] = {}
"""Answers per machines, their states and the tools asked (the machines kept, so their
ids are not reused): runs of one spec that reach the same states ask nothing again. The
answer is shared: callers copy what they keep."""


def _shape(fw: FirewallCore) -> _Shape:
    monitor = fw.monitor
    found = _SHAPES.get(monitor)
    if found is None:
        nodes = tuple(
            pair for name in fw._constraints for pair in _automata(name, monitor.node(name))
        )
        machines = tuple(node.machine for _, node in nodes)
        found = _SHAPES[monitor] = _Shape(nodes, machines, tuple(map(id, machines)))
    return found


def _automata(name: str, node: Node) -> Iterable[tuple[str, AutomatonNode]]:
    """The automata whose acceptance the constraint needs: the node's own, or each
    conjunct's of a conjunction (a part of a disjunction or negation is not needed)."""
    if isinstance(node, AutomatonNode):
        yield name, node
    elif isinstance(node, BoolNode) and node.op == "and":
        for child in node.children:
            yield from _automata(name, child)


def _conflict(parts: Sequence[_Part], tool: str | None) -> str | None:
    """Why no continuation satisfies every part after a call of ``tool`` (None: now),
    or None when the parts' prospects show no conflict."""
    needs: dict[str, tuple[int, str]] = {}
    rooms: dict[str, tuple[int, str]] = {}
    for part in parts:
        found = _after(part, tool)
        if found is None:
            continue
        need, room = found
        for name, n in need.items():
            if n > needs.get(name, (0, ""))[0]:
                needs[name] = (n, part.constraint)
        for name, r in room.items():
            if name not in rooms or r < rooms[name][0]:
                rooms[name] = (r, part.constraint)
    for name, (n, wanting) in needs.items():
        if name in rooms and rooms[name][0] < n:
            r, limiting = rooms[name]
            return (
                f"{wanting} would still need {n} more call(s) of {name}, and {limiting} "
                f"would admit {r} more"
            )
    return None


Ask = tuple[dict[str, int], dict[str, int]]
"""A part's need and room per tool name (only the tools it needs, only bounded rooms)."""

_MEMO: dict[int, tuple[Machine, dict[tuple[int, NameClass | bool], Ask | None]]] = {}
"""Answers of :func:`_after` per machine (by identity; the machine kept so its id is not
reused), per state and name class of the call (``False``: no call): machines and their
states are shared by every run of a spec and never change."""


def _after(part: _Part, tool: str | None) -> Ask | None:
    """The part's need and room per tool name after a call of ``tool`` (None: now),
    whatever its arguments; None when the part says nothing."""
    m = part.machine
    entry = _MEMO.get(id(m))
    if entry is None or entry[0] is not m:
        entry = _MEMO[id(m)] = (m, {})
    memo = entry[1]
    cls: NameClass | bool = False if tool is None else (tool if tool in m.names else OTHER)
    key = (part.state, cls)
    if key in memo:
        return memo[key]
    if len(memo) >= MAX_MEMO:
        memo.clear()
    found = memo[key] = _ask(m, part.state, cls)
    return found


def _ask(m: Machine, state: int, cls: NameClass | bool) -> Ask | None:
    if isinstance(cls, bool):  # no call: the state as it is
        states = {state}
    else:
        bits = len(m._data[cls])
        states = {m.step(state, (cls, mask)) for mask in range(1 << bits)}
    found: list[Prospect] = []
    for each in states:
        p = prospect(m, each)
        if p is None:
            return None
        found.append(p)
    need: dict[str, int] = {}
    room: dict[str, int] = {}
    for n in m.names:
        least = min(p.need.get(n, 0) for p in found)
        if least:
            need[n] = least
        rooms = [p.room.get(n) for p in found]
        if all(r is not None for r in rooms):
            room[n] = max(r for r in rooms if r is not None)
    return need, room
