"""A compiled constraint: formula progression over a lazily built automaton.

A machine state (``cstate``) is a pair (residual, past registers), interned to an int.
``step(cstate, letter)`` is one memoised dictionary lookup once warm, so the work per
event does not grow with the trace. A *letter* abstracts one call: its tool-name class
(a name the formula mentions, or ``OTHER``) plus one bit per data atom of that class.

Verdicts are exact for the propositional fragment: a state is VIOLATED iff no state
with an accepting end is reachable over the letters (exactly one tool name per call),
SATISFIED iff every reachable state accepts. With data atoms each bit is free, which
over-approximates the possible calls: VIOLATED and SATISFIED stay sound, only later.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any, Final

from agentguard.monitor.atoms import (
    Atom,
    Env,
    EventAtom,
    FrozenAtom,
    NonEmpty,
    PastAtom,
    eval_event,
)
from agentguard.monitor.formula import DNF_FALSE, DNF_TRUE, FALSE, TRUE, Dnf, Store
from agentguard.monitor.verdict import Classification, Enforceability, Verdict
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Matcher
from agentguard.trace.model import Call

OTHER: Final = ""
"""The name class of a call to a tool the formula never mentions."""

Letter = tuple[str, int]
CState = tuple[int, tuple[int, ...]]

MAX_EXPLORE: Final = 5_000
"""States explored per verdict question. A machine that exceeds it once is *too large*:
from then on only decided residuals (true / false) give verdicts, PENDING otherwise (sound,
not earliest), so no call ever pays for a second failed exploration."""
MAX_LETTERS: Final = 4096

_EMPTY_PAST: Final[Mapping[str, bool]] = {
    "Y": False,
    "Z": True,
    "O": False,
    "H": True,
    "S": False,
    "OB": False,
    "HB": True,
}


@dataclass(frozen=True, slots=True)
class Register:
    """A past-time subformula (``Y Z O H S``; bounded ones are unrolled by the compiler).

    Its content at position i is a *residual*: the obligation on the suffix from i under
    which the subformula holds at i. For a purely past operand it is a constant after one
    step; with future operators inside (``O F a``) it is a real obligation, which keeps
    mixed past/future formulas exact. With v = the content progressed over the call at i:
    ``O φ``: φ ∨ v, ``H φ``: φ ∧ v, ``φ S ψ``: ψ ∨ (φ ∧ v), ``Y φ``/``Z φ``: φ progressed.
    """

    kind: str  # Y Z O H S
    left: int  # node id of the operand (S: the left operand)
    right: int = -1  # S: the right operand


@dataclass(slots=True)
class Machine:
    """One quantifier-free formula compiled for monitoring (shared by all its instances)."""

    store: Store
    atoms: list[Atom]
    registers: list[Register]
    root: int
    ne_atom: int
    var: str | None = None
    match: Matcher = values_match
    names: tuple[str, ...] = ()
    _events: list[int] = field(default_factory=list)
    _data: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _initial_regs: tuple[int, ...] = ()
    _neg_residual: dict[int, int] = field(default_factory=dict)
    cstates: list[CState] = field(default_factory=list)
    _cstate_ids: dict[CState, int] = field(default_factory=dict)
    _trans: dict[tuple[int, Letter], int] = field(default_factory=dict)
    _prog_memo: dict[tuple[int, tuple[Letter, tuple[int, ...]]], Dnf] = field(default_factory=dict)
    _verdict: dict[int, Verdict] = field(default_factory=dict)
    _acc: dict[int, bool] = field(default_factory=dict)
    _frozen_memo: dict[int, tuple[int, ...]] = field(default_factory=dict)
    _final_memo: dict[int, bool | None] = field(default_factory=dict)
    _refs: dict[tuple[int, tuple[int, ...]], frozenset[int]] = field(default_factory=dict)
    _atoms_memo: dict[int, frozenset[int]] = field(default_factory=dict)
    _valuations: dict[Letter, dict[int, bool]] = field(default_factory=dict)
    init: int = 0
    too_large: bool = False

    def __post_init__(self) -> None:
        names: list[str] = []
        for i, a in enumerate(self.atoms):
            if isinstance(a, EventAtom):
                self._events.append(i)
                if a.tool is not None and a.tool not in names:
                    names.append(a.tool)
        self.names = tuple(sorted(names))
        for cls in (*self.names, OTHER):
            self._data[cls] = tuple(
                i for i in self._events if self._applies(i, cls) and self._event(i).has_data
            )
        s = self.store
        initial = {"Y": DNF_FALSE, "Z": DNF_TRUE}
        self._initial_regs = tuple(
            s.residual(
                initial[r.kind]
                if r.kind in initial
                else s.dnf(r.right if r.kind == "S" else r.left)
            )
            for r in self.registers
        )
        self.init = self.intern(s.residual(s.dnf(self.root)), self._initial_regs)

    # ------------------------------------------------------------------ basics
    def _event(self, i: int) -> EventAtom:
        a = self.atoms[i]
        if not isinstance(a, EventAtom):  # pragma: no cover - internal invariant
            raise TypeError(a)
        return a

    def _applies(self, i: int, cls: str) -> bool:
        tool = self._event(i).tool
        return tool is None or tool == cls

    @property
    def propositional(self) -> bool:
        """Only tool-name atoms (and past operators over them): verdicts are exact."""
        return not any(self._data[c] for c in self._data) and not self.frozen_atoms

    @property
    def frozen_atoms(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.atoms) if isinstance(a, FrozenAtom))

    def intern(self, residual: int, regs: tuple[int, ...]) -> int:
        regs = self._canonical_regs(residual, regs)
        key = (residual, regs)
        found = self._cstate_ids.get(key)
        if found is None:
            found = len(self.cstates)
            self.cstates.append(key)
            self._cstate_ids[key] = found
        return found

    def _canonical_regs(self, residual: int, regs: tuple[int, ...]) -> tuple[int, ...]:
        if not regs:
            return regs
        used = self._referenced_registers(residual, regs)
        if len(used) == len(regs):
            return regs
        return tuple(
            v if j in used else r0
            for j, (v, r0) in enumerate(zip(regs, self._initial_regs, strict=True))
        )

    def _residual_atoms(self, residual: int) -> set[int]:
        atoms: set[int] = set()
        for cube in self.store.residuals[residual]:
            for e in cube:
                atoms |= self.store.atoms_of(e, self._atoms_memo)
        return atoms

    def _referenced_registers(self, residual: int, regs: tuple[int, ...]) -> frozenset[int]:
        key = (residual, regs)
        found = self._refs.get(key)
        if found is not None:
            return found
        atoms = self._residual_atoms(residual)
        used = {a.register for i in atoms if isinstance(a := self.atoms[i], PastAtom)}
        stack = list(used)
        while stack:  # a register's operands and content may read inner registers
            j = stack.pop()
            r = self.registers[j]
            inner = self.store.atoms_of(r.left, self._atoms_memo) | self._residual_atoms(regs[j])
            if r.right >= 0:
                inner = inner | self.store.atoms_of(r.right, self._atoms_memo)
            for i in inner:
                a = self.atoms[i]
                if isinstance(a, PastAtom) and a.register not in used:
                    used.add(a.register)
                    stack.append(a.register)
        out = frozenset(used)
        self._refs[key] = out
        return out

    # ------------------------------------------------------------------ letters
    def letters_of(self, call: Call, env: Env, *, pending: bool) -> list[Letter]:
        """The letters a concrete call may be (several when result tests are unknown)."""
        cls = call.name if call.name in self.names else OTHER
        data = self._data[cls]
        if not data:
            return [(cls, 0)]
        match = self.match
        mask = 0
        unknown: list[int] = []
        for bit, i in enumerate(data):
            v = eval_event(self._event(i), call, env, match, pending=pending)
            if v is None:
                if pending:
                    unknown.append(bit)
                    continue
                v = False
            if v:
                mask |= 1 << bit
        if not unknown:
            return [(cls, mask)]
        out = []
        for combo in product((0, 1), repeat=len(unknown)):
            m = mask
            for bit, on in zip(unknown, combo, strict=True):
                if on:
                    m |= 1 << bit
            out.append((cls, m))
        return out

    def all_letters(self) -> list[Letter] | None:
        total = sum(1 << len(self._data[c]) for c in self._data)
        if total > MAX_LETTERS:
            return None
        return [(c, m) for c in (*self.names, OTHER) for m in range(1 << len(self._data[c]))]

    def _valuation(self, letter: Letter) -> dict[int, bool]:
        found = self._valuations.get(letter)
        if found is not None:
            return found
        cls, mask = letter
        data = self._data[cls]
        val: dict[int, bool] = {}
        for i in self._events:
            if not self._applies(i, cls):
                val[i] = False
            elif i in data:
                val[i] = bool(mask >> data.index(i) & 1)
            else:
                val[i] = True
        self._valuations[letter] = val
        return val

    # ------------------------------------------------------------------ progression
    def step(self, cstate: int, letter: Letter) -> int:
        key = (cstate, letter)
        found = self._trans.get(key)
        if found is not None:
            return found
        residual, regs = self.cstates[cstate]
        val = self._valuation(letter)
        s = self.store
        vs: list[int] = []  # each register's content progressed over this call (inner first)
        for content in regs:
            inner = (letter, tuple(vs))
            vs.append(s.map_residual(content, functools.partial(self._prog, val=val, ctx=inner)))
        ctx = (letter, tuple(vs))
        new_regs = []
        for j, reg in enumerate(self.registers):
            v = s.residuals[vs[j]]
            if reg.kind in ("Y", "Z"):
                nxt = self._prog(reg.left, val, ctx)
            elif reg.kind == "O":
                nxt = s.d_or(s.dnf(reg.left), v)
            elif reg.kind == "H":
                nxt = s.d_and(s.dnf(reg.left), v)
            else:  # S
                nxt = s.d_or(s.dnf(reg.right), s.d_and(s.dnf(reg.left), v))
            new_regs.append(s.residual(nxt))
        out = s.map_residual(residual, lambda e: self._prog(e, val, ctx))
        result = self.intern(out, tuple(new_regs))
        self._trans[key] = result
        return result

    def _negated(self, residual: int) -> int:
        found = self._neg_residual.get(residual)
        if found is None:
            s = self.store
            found = s.residual(s.dnf(s.neg(s.residual_node(residual))))
            self._neg_residual[residual] = found
        return found

    def _prog(self, e: int, val: Mapping[int, bool], ctx: tuple[Letter, tuple[int, ...]]) -> Dnf:
        key = (e, ctx)
        found = self._prog_memo.get(key)
        if found is not None:
            return found
        s = self.store
        n = s.nodes[e]
        op = n[0]
        if op == "T":
            out = DNF_TRUE
        elif op == "F":
            out = DNF_FALSE
        elif op == "L":
            atom = self.atoms[n[1]]
            if isinstance(atom, NonEmpty):
                out = DNF_TRUE if n[2] else DNF_FALSE
            elif isinstance(atom, EventAtom):
                out = DNF_TRUE if val[n[1]] == n[2] else DNF_FALSE
            elif isinstance(atom, PastAtom):
                v = ctx[1][atom.register]
                out = s.residuals[v if n[2] else self._negated(v)]
            else:  # frozen: fixed for the whole trace, not resolved yet
                out = frozenset({frozenset({e})})
        elif op == "A":
            out = DNF_TRUE
            for c in n[1]:
                out = s.d_and(out, self._prog(c, val, ctx))
        elif op == "O":
            out = DNF_FALSE
            for c in n[1]:
                out = s.d_or(out, self._prog(c, val, ctx))
        elif op == "X":
            out = s.d_and(s.dnf(s.lit(self.ne_atom, True)), s.dnf(n[1]))
        elif op == "N":
            out = s.d_or(s.dnf(s.lit(self.ne_atom, False)), s.dnf(n[1]))
        elif op == "U":
            here = frozenset({frozenset({e})})
            out = s.d_or(self._prog(n[2], val, ctx), s.d_and(self._prog(n[1], val, ctx), here))
        elif op == "R":
            here = frozenset({frozenset({e})})
            out = s.d_and(self._prog(n[2], val, ctx), s.d_or(self._prog(n[1], val, ctx), here))
        elif op == "FB":
            rest = s.dnf(s.eventually(n[2], n[1] - 1)) if n[1] > 0 else DNF_FALSE
            out = s.d_or(self._prog(n[2], val, ctx), rest)
        else:  # GB
            rest = s.dnf(s.always(n[2], n[1] - 1)) if n[1] > 0 else DNF_TRUE
            out = s.d_and(self._prog(n[2], val, ctx), rest)
        self._prog_memo[key] = out
        return out

    # ------------------------------------------------------------------ ends
    def accepts(self, cstate: int) -> bool:
        """Would the trace satisfy the formula if it ended in this state? (frozen atoms: false)"""
        found = self._acc.get(cstate)
        if found is None:
            found = any(
                all(self._acc_elem(e) for e in cube)
                for cube in self.store.residuals[self.cstates[cstate][0]]
            )
            self._acc[cstate] = found
        return found

    def _acc_elem(self, e: int) -> bool:
        n = self.store.nodes[e]
        op = n[0]
        if op == "L":
            atom = self.atoms[n[1]]
            if isinstance(atom, PastAtom):
                return bool(_EMPTY_PAST[self.registers[atom.register].kind] == n[2])
            if isinstance(atom, FrozenAtom):
                return False
            return not n[2]
        return op in ("T", "N", "R", "GB")

    def frozen_in(self, cstate: int) -> tuple[int, ...]:
        """Frozen atoms the state still depends on."""
        found = self._frozen_memo.get(cstate)
        if found is None:
            atoms = self._residual_atoms(self.cstates[cstate][0])
            found = tuple(sorted(i for i in atoms if isinstance(self.atoms[i], FrozenAtom)))
            self._frozen_memo[cstate] = found
        return found

    def resolve(self, cstate: int, values: Mapping[int, bool]) -> int:
        """The state with frozen atoms replaced by their values."""
        if not values:
            return cstate
        residual, regs = self.cstates[cstate]
        memo: dict[int, int] = {}
        s = self.store
        out = s.residual(s.dnf(s.substitute(s.residual_node(residual), dict(values), memo)))
        return self.intern(out, regs)

    def assignments(self, cstate: int) -> Iterator[int]:
        """The state under every assignment of its unresolved frozen atoms."""
        frozen = self.frozen_in(cstate)
        if not frozen:
            yield cstate
            return
        for combo in product((False, True), repeat=len(frozen)):
            yield self.resolve(cstate, dict(zip(frozen, combo, strict=True)))

    def final(self, cstate: int) -> bool | None:
        """Truth if the trace ended now; None when it hangs on an unresolved frozen atom."""
        if cstate in self._final_memo:
            return self._final_memo[cstate]
        values = {self.accepts(c) for c in self.assignments(cstate)}
        out = values.pop() if len(values) == 1 else None
        self._final_memo[cstate] = out
        return out

    # ------------------------------------------------------------------ verdicts
    def verdict(self, cstate: int) -> Verdict:
        found = self._verdict.get(cstate)
        if found is not None:
            return found
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
            self.too_large = True
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
        graph: dict[int, set[int]] = {}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if node in graph:
                continue
            if len(graph) >= MAX_EXPLORE:
                return None
            succ = {self.step(node, letter) for letter in letters}
            graph[node] = succ
            queue.extend(s for s in succ if s not in graph)
        return graph

    def _solve(self, graph: Mapping[int, set[int]]) -> tuple[set[int], set[int]]:
        preds: dict[int, list[int]] = {n: [] for n in graph}
        for n, succ in graph.items():
            for s in succ:
                preds[s].append(n)
        sat = _backward({n for n in graph if self.accepts(n)}, preds)
        invalid = _backward({n for n in graph if not self.accepts(n)}, preds)
        return sat, set(graph) - invalid

    def classify(self) -> Classification:
        """Safety / mixed / liveness of the formula over finite traces."""
        exact = self.propositional
        if any(isinstance(a, FrozenAtom) and a.metric for a in self.atoms):
            return Classification(
                Enforceability.MIXED, False, "reads metrics, known at the end: at least mixed"
            )
        letters = self.all_letters()
        kinds = set()
        for start in self.assignments(self.init):
            graph = None if self.too_large or letters is None else self._reach(start, letters)
            if graph is None:
                self.too_large = True
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
        head = cls or "any other tool"
        if not events:
            return head
        if cls and all(e.tool == cls and e.result is None for e in events):
            tests = dict.fromkeys(_test_text(t, env) for e in events for t in e.tests)
            text = f"{cls}({', '.join(tests)})" if tests else cls
            outcomes = {e.outcome for e in events} - {None}
            if outcomes:  # one letter has one outcome; a satisfiable letter, at most one
                text += " successfully" if outcomes == {"ok"} else " (ending in an error)"
            return text
        texts = [printer.formula(_as_event(e)) for e in events]
        return head + f" (matching {', '.join(texts)})"

    # ------------------------------------------------------------------ state files
    def export_state(self, cstate: int) -> dict[str, Any]:
        """The state as plain JSON: residual and register contents as DNFs over a node table."""
        residual, regs = self.cstates[cstate]
        nodes: dict[int, Any] = {}

        def cubes(r: int) -> list[list[int]]:
            return [
                [self._export_node(e, nodes) for e in sorted(c)] for c in self.store.residuals[r]
            ]

        return {
            "cubes": cubes(residual),
            "regs": [cubes(r) for r in regs],
            "nodes": {str(k): v for k, v in nodes.items()},
        }

    def _export_node(self, i: int, out: dict[int, Any]) -> int:
        if i in out:
            return i
        n = self.store.nodes[i]
        op = n[0]
        if op in ("T", "F"):
            out[i] = [op]
        elif op == "L":
            out[i] = ["L", n[1], n[2]]
        elif op in ("A", "O"):
            out[i] = [op, [self._export_node(c, out) for c in n[1]]]
        elif op in ("X", "N"):
            out[i] = [op, self._export_node(n[1], out)]
        elif op in ("U", "R"):
            out[i] = [op, self._export_node(n[1], out), self._export_node(n[2], out)]
        else:
            out[i] = [op, n[1], self._export_node(n[2], out)]
        return i

    def import_state(self, doc: Mapping[str, Any]) -> int:
        raw = {int(k): v for k, v in doc["nodes"].items()}
        built: dict[int, int] = {}
        s = self.store

        def build(k: int) -> int:
            if k in built:
                return built[k]
            n = raw[k]
            op = n[0]
            if op == "T":
                out = TRUE
            elif op == "F":
                out = FALSE
            elif op == "L":
                if not 0 <= int(n[1]) < len(self.atoms):
                    raise ValueError("state refers to an atom this spec does not have")
                out = s.lit(int(n[1]), bool(n[2]))
            elif op in ("A", "O"):
                out = s.mk((op, tuple(sorted(build(c) for c in n[1]))))
            elif op in ("X", "N"):
                out = s.mk((op, build(n[1])))
            elif op in ("U", "R"):
                out = s.mk((op, build(n[1]), build(n[2])))
            else:
                out = s.mk((op, int(n[1]), build(n[2])))
            built[k] = out
            return out

        def residual(cubes: Any) -> int:
            return s.residual(frozenset(frozenset(build(int(e)) for e in c) for c in cubes))

        regs = tuple(residual(r) for r in doc["regs"])
        if len(regs) != len(self.registers):
            raise ValueError("state has a different number of past-time registers")
        return self.intern(residual(doc["cubes"]), regs)


def _backward(seeds: set[int], preds: Mapping[int, list[int]]) -> set[int]:
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
