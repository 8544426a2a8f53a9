"""Satisfiability on the automaton of a formula's propositional abstraction.

The monitor's :class:`~agentguard.monitor.machine.Machine` is an LTLf automaton built
lazily by formula progression; its letters are a tool-name class (exactly one per call)
plus one free bit per data atom. Exploring every letter from the initial state, under
every value of the position-independent (frozen) atoms, therefore covers *more* runs
than can really happen, never fewer. Hence:

* no accepting state reachable: **no** finite trace satisfies the formula (a proof);
* every reachable state accepting: **every** trace satisfies it (a proof);
* every reachable state can still reach an accepting one: the monitor, which decides on
  this same abstraction, never reports VIOLATED on a prefix.

Without data atoms the abstraction is exact, so these are exact decisions; with them
the converse findings ("may be satisfiable") are only possibilities. Exploration is
bounded; past the bound every answer is "unknown" and nothing is claimed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agentguard.monitor.machine import MAX_EXPLORE, OTHER, Letter, Machine, backward_closure

MAX_FROZEN = 10
"""Frozen atoms (comparisons, user predicates, budgets) whose 2^k values are enumerated."""
MAX_TRANSITIONS = 400_000
"""Transitions computed per exploration, whatever the number of letters."""
SECONDS = 2.0
"""Wall-clock bound per exploration: progression of a large residual can be slow even
when few states are reachable, and lint must answer in bounded time."""


@dataclass(frozen=True, slots=True)
class Exploration:
    """What the bounded exploration of one machine proved.

    Each of ``satisfiable``, ``valid`` and ``never_refuted`` is True or False when
    decided, None when the bound was hit first. ``satisfiable`` True means satisfiable
    in the abstraction (exactly so when ``exact``). ``over_budget``: more reachable states
    than the monitor's exploration bound (its verdicts may then come late).
    """

    satisfiable: bool | None
    valid: bool | None
    never_refuted: bool | None
    exact: bool
    states: int
    over_budget: bool


def starts(machine: Machine) -> list[int] | None:
    """The initial state under every value of its frozen atoms (None: too many)."""
    if len(machine.frozen_in(machine.init)) > MAX_FROZEN:
        return None
    return list(dict.fromkeys(machine.assignments(machine.init)))


def ordered_letters(machine: Machine) -> list[Letter] | None:
    """Every letter, fewest data bits first and named tools before "any other tool".

    The order makes breadth-first witnesses read naturally: plain calls of the tools
    the spec names.
    """
    letters = machine.all_letters()
    if letters is None:
        return None
    return sorted(
        letters,
        key=lambda letter: (
            bin(letter[1]).count("1"),
            letter[0] is OTHER,
            letter[0] or "",
            letter[1],
        ),
    )


def explore(
    machine: Machine, budget: int = MAX_EXPLORE, seconds: float | None = None
) -> Exploration:
    """Explore the whole reachable abstraction (up to ``budget`` states and ``seconds``,
    by default :data:`SECONDS` as it is when called)."""
    deadline = time.monotonic() + (SECONDS if seconds is None else seconds)
    exact = machine.propositional
    roots = starts(machine)
    letters = ordered_letters(machine)
    if roots is None or letters is None:
        return Exploration(None, None, None, exact, 0, True)
    graph: dict[int, set[int]] = {}
    queue = deque(roots)
    transitions = 0
    while queue:
        node = queue.popleft()
        if node in graph:
            continue
        if len(graph) >= budget:
            return Exploration(None, None, None, exact, len(graph), True)
        transitions += len(letters)
        if transitions > MAX_TRANSITIONS or time.monotonic() > deadline:
            return Exploration(None, None, None, exact, len(graph), False)
        succ = set()
        for letter in letters:
            if time.monotonic() > deadline:  # one node may have hundreds of letters
                return Exploration(None, None, None, exact, len(graph), False)
            succ.add(machine.step(node, letter))
        graph[node] = succ
        queue.extend(s for s in succ if s not in graph)
    accepting = {n for n in graph if machine.accepts(n)}
    preds: dict[int, list[int]] = {n: [] for n in graph}
    for n, succ in graph.items():
        for s in succ:
            preds[s].append(n)
    alive = backward_closure(accepting, preds)
    return Exploration(
        satisfiable=bool(accepting),
        valid=len(accepting) == len(graph),
        never_refuted=len(alive) == len(graph),
        exact=exact,
        states=len(graph),
        over_budget=False,
    )


@dataclass(frozen=True, slots=True)
class Path:
    """Letters from an initial state to an accepting one."""

    letters: tuple[Letter, ...]
    state: int


def accepting_paths(
    machine: Machine,
    budget: int,
    letters: Sequence[Letter] | None = None,
    deadline: float | None = None,
    *,
    nonempty: bool = False,
) -> Iterator[Path | None]:
    """Shortest paths to accepting states, in breadth-first order.

    ``letters``: the alphabet to search over (default: every letter, which makes an
    exhausted search a proof of unsatisfiability). ``nonempty``: only paths with at least
    one letter. Yields None once, at the end, if the bound (states, transitions, or the
    ``time.monotonic()`` ``deadline``) stopped the search first (so "no path" is not a
    proof).
    """
    if deadline is None:
        deadline = time.monotonic() + SECONDS
    roots = starts(machine)
    if letters is None:
        letters = ordered_letters(machine)
    if roots is None or letters is None:
        yield None
        return
    # a search node is (state, moved): the empty path and a path back to a root differ
    # only when non-empty paths are asked for
    Key = tuple[int, bool]
    parent: dict[Key, tuple[Key, Letter] | None] = {(r, not nonempty): None for r in roots}
    queue = deque(parent)
    transitions = 0
    while queue:
        key = queue.popleft()
        node, moved = key
        if moved and machine.accepts(node):
            yield Path(_route(parent, key), node)
        transitions += len(letters)
        if len(parent) > budget or transitions > MAX_TRANSITIONS or time.monotonic() > deadline:
            yield None
            return
        for letter in letters:
            if time.monotonic() > deadline:  # one node may have hundreds of letters
                yield None
                return
            nxt = (machine.step(node, letter), True)
            if nxt not in parent:
                parent[nxt] = (key, letter)
                queue.append(nxt)


def _route(
    parent: dict[tuple[int, bool], tuple[tuple[int, bool], Letter] | None],
    key: tuple[int, bool],
) -> tuple[Letter, ...]:
    out: list[Letter] = []
    link = parent[key]
    while link is not None:
        prev, letter = link
        out.append(letter)
        link = parent[prev]
    return tuple(reversed(out))
