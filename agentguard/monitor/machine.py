"""A compiled constraint's machine: verdicts, classification and hints on its automaton.

Verdicts are exact for the propositional fragment: a state is VIOLATED iff no state
with an accepting end is reachable over the letters (exactly one tool name per call),
SATISFIED iff every reachable state accepts. With data atoms each bit is free, which
over-approximates the possible calls: VIOLATED and SATISFIED stay sound, only later.
Stepping lives in :mod:`agentguard.monitor.stepping`, state documents in
:mod:`agentguard.monitor.persistence`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agentguard.monitor.atoms import Env, EventAtom, FrozenAtom
from agentguard.monitor.budget import CountTest, count_tests
from agentguard.monitor.registers import Register
from agentguard.monitor.stepping import OTHER, Automaton, Letter
from agentguard.monitor.verdict import Classification, Enforceability, Verdict

MAX_EXPLORE: Final = 5_000
"""States explored per verdict question. A machine that exceeds it once is *too large*:
from then on only decided residuals (true / false) give verdicts, PENDING otherwise (sound,
not earliest), so no call ever pays for a second failed exploration."""

MAX_SPEC_EXPLORE: Final = 50_000
"""States all the machines of one compiled spec explore together, for every verdict and
classification question (ten machines at :data:`MAX_EXPLORE`). The per-machine budget
alone let a spec cost its number of constraints times the budget (fifty
``G(b -> O[<=1000000] a)`` took 20 s to build, thousands would take hours); the shipped
and generated specs explore under 600 states in all. A machine that finds the pool empty
is *too large*, as one past its own budget."""


class StatePool:
    """What is left of :data:`MAX_SPEC_EXPLORE` for one compiled spec, shared by its
    machines. A mutable counter on purpose; it is soft: two threads exploring at once may
    overdraw it by one exploration each, never more."""

    __slots__ = ("left",)

    def __init__(self, states: int) -> None:
        self.left = states


BUDGET_HITS = [0]
"""How many machines have exceeded :data:`MAX_EXPLORE` in this process (monitors poll it
to learn cheaply whether one of theirs may have)."""

__all__ = [
    "BUDGET_HITS",
    "MAX_EXPLORE",
    "MAX_SPEC_EXPLORE",
    "OTHER",
    "Letter",
    "Machine",
    "Register",
    "StatePool",
    "backward_closure",
]


@dataclass(slots=True)
class Machine(Automaton):
    """An automaton with the questions the monitor asks of it."""

    _budget_tests: tuple[CountTest, ...] | None = None
    pool: StatePool | None = None  # the compiled spec's share (compiled.py); None: unshared

    def budget_tests(self) -> tuple[CountTest, ...]:
        """Every ``num_tool_calls`` budget test among the atoms (monitor/budget.py):
        found once per machine, not once per run that monitors it."""
        found = self._budget_tests
        if found is None:  # a race computes the same tuple twice: harmless
            found = self._budget_tests = count_tests(self.atoms)
        return found

    def _over_budget(self) -> None:
        """Mark the machine too large (once): decided residuals only from now on."""
        if not self.too_large:
            self.too_large = True
            BUDGET_HITS[0] += 1

    # ------------------------------------------------------------------ verdicts
    def verdict(self, cstate: int) -> Verdict:
        found = self._verdict.get(cstate)
        if found is not None:
            return found
        with self.lock:
            verdicts = {self._explore(c) for c in self.assignments(cstate)}
        out = verdicts.pop() if len(verdicts) == 1 else Verdict.PENDING
        self._verdict[cstate] = out
        return out

    def _explore(self, cstate: int) -> Verdict:
        found = self._verdict.get(cstate)
        if found is not None:
            return found
        residual = self.cstates[cstate][0]
        if residual == 0:
            return Verdict.SATISFIED
        if residual == 1:
            return Verdict.VIOLATED
        letters = None if self.too_large else self.all_letters()
        graph = self._reach(cstate, letters) if letters is not None else None
        if graph is None:
            self._over_budget()
            self._verdict[cstate] = Verdict.PENDING
            return Verdict.PENDING
        sat, valid = self._solve(graph)
        for node in graph:
            v = (
                Verdict.VIOLATED
                if node not in sat
                else (Verdict.SATISFIED if node in valid else Verdict.PENDING)
            )
            self._verdict.setdefault(node, v)
        return self._verdict[cstate]

    def _reach(self, start: int, letters: Sequence[Letter]) -> dict[int, set[int]] | None:
        """The graph reachable from ``start``, or None past this machine's budget or what
        is left of its spec's (each state explored is charged to the spec's pool)."""
        pool = self.pool
        limit = MAX_EXPLORE if pool is None else min(MAX_EXPLORE, pool.left)
        graph: dict[int, set[int]] = {}
        queue = deque([start])
        try:
            while queue:
                node = queue.popleft()
                if node in graph:
                    continue
                if len(graph) >= limit:
                    return None
                succ = {self.step(node, letter) for letter in letters}
                graph[node] = succ
                queue.extend(s for s in succ if s not in graph)
            return graph
        finally:
            if pool is not None:
                pool.left -= len(graph)

    def _solve(self, graph: Mapping[int, set[int]]) -> tuple[set[int], set[int]]:
        preds: dict[int, list[int]] = {n: [] for n in graph}
        for n, succ in graph.items():
            for s in succ:
                preds[s].append(n)
        sat = backward_closure({n for n in graph if self.accepts(n)}, preds)
        invalid = backward_closure({n for n in graph if not self.accepts(n)}, preds)
        return sat, set(graph) - invalid

    def classify(self) -> Classification:
        """Safety / mixed / liveness of the formula over finite traces."""
        exact = self.propositional
        if any(isinstance(a, FrozenAtom) and a.metric for a in self.atoms):
            return Classification(
                Enforceability.MIXED, False, "reads metrics, known at the end: at least mixed"
            )
        letters = self.all_letters()
        kinds: set[Enforceability] = set()
        with self.lock:
            return self._classify_locked(letters, kinds, exact)

    def _classify_locked(
        self, letters: list[Letter] | None, kinds: set[Enforceability], exact: bool
    ) -> Classification:
        for start in self.assignments(self.init):
            graph = None if self.too_large or letters is None else self._reach(start, letters)
            if graph is None:
                self._over_budget()
                return Classification(Enforceability.MIXED, False, "too large to classify exactly")
            sat, _ = self._solve(graph)
            safety = all(self.accepts(n) for n in sat)
            liveness = len(sat) == len(graph)
            kinds.add(
                Enforceability.SAFETY
                if safety
                else (Enforceability.LIVENESS if liveness else Enforceability.MIXED)
            )
        kind = kinds.pop() if len(kinds) == 1 else Enforceability.MIXED
        if not exact and kind is not Enforceability.SAFETY:
            return Classification(Enforceability.MIXED, False, "data atoms: at least mixed")
        return Classification(kind, exact, "")

    # ------------------------------------------------------------------ hints
    def repair(
        self, cstate: int, then: Sequence[Letter], *, ending: bool, depth: int = 3
    ) -> list[Letter] | None:
        """Shortest letters to insert before ``then`` so that it is no longer a violation.

        ``ending``: the run ends after ``then`` (the letters must make it accept).
        """
        letters = self.all_letters()
        if letters is None:
            return None

        def good(node: int) -> bool:
            for letter in then:
                nxt = self.step(node, letter)
                if ending and not self.accepts(nxt):
                    return False
                if not ending and self.verdict(nxt) is Verdict.VIOLATED:
                    return False
            return True

        seen = {cstate}
        frontier: list[tuple[int, list[Letter]]] = [(cstate, [])]
        for _ in range(depth):
            nxt_frontier = []
            for node, path in frontier:
                for letter in letters:
                    succ = self.step(node, letter)
                    if succ in seen or self.verdict(succ) is Verdict.VIOLATED:
                        continue
                    seen.add(succ)
                    route = [*path, letter]
                    if good(succ):
                        return route
                    nxt_frontier.append((succ, route))
            frontier = nxt_frontier
        return None

    def describe(self, letter: Letter, env: Env | None = None) -> str:
        """A letter as the model should read it: ``lookup_order(order_id = "A1")``.

        ``env`` binds a quantified variable to its instance's value in the text.
        """
        from agentguard.language import printer

        cls, mask = letter
        data = self._data[cls]
        events = [self._event(i) for bit, i in enumerate(data) if mask >> bit & 1]
        head = "any other tool" if cls is OTHER else repr(cls) if cls == "" else cls
        if not events:
            return head
        if cls is not OTHER and all(e.tool == cls and e.result is None for e in events):
            tests = dict.fromkeys(_test_text(t, env) for e in events for t in e.tests)
            text = f"{head}({', '.join(tests)})" if tests else head
            outcomes = {e.outcome for e in events} - {None}
            if outcomes:  # one letter has one outcome; a satisfiable letter, at most one
                text += " successfully" if outcomes == {"ok"} else " (ending in an error)"
            return text
        texts = [printer.formula(_as_event(e)) for e in events]
        return head + f" (matching {', '.join(texts)})"


def backward_closure(seeds: set[int], preds: Mapping[int, list[int]]) -> set[int]:
    """``seeds`` and every state that reaches one (``preds``: state -> its predecessors)."""
    out = set(seeds)
    stack = list(seeds)
    while stack:
        n = stack.pop()
        for p in preds[n]:
            if p not in out:
                out.add(p)
                stack.append(p)
    return out


def _test_text(t: Any, env: Env | None) -> str:
    """``order_id = "A1"``: an argument test with the instance's value in place of the variable."""
    from agentguard.language import ast as A
    from agentguard.language import printer

    value = t.value
    if isinstance(value, A.Var) and not value.path and env is not None and value.name in env:
        value = A.Literal(env[value.name])
    try:
        shown = printer.term(value)
    except TypeError:  # a value with no literal syntax
        shown = repr(value.value if isinstance(value, A.Literal) else value)
    return f"{printer.term(t.field)} {t.op} {shown}"


def _as_event(atom: EventAtom) -> Any:
    from agentguard.language import ast as A

    return A.Event(atom.tool, atom.tests, atom.outcome)
