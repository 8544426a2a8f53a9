"""The lazily built automaton of one compiled constraint: states, letters, progression.

A machine state (``cstate``) is a pair (residual, past registers), interned to an int.
``step(cstate, letter)`` is one memoised dictionary lookup once warm, so the work per
event does not grow with the trace. A *letter* abstracts one call: its tool-name class
(a name the formula mentions, or ``OTHER``) plus one bit per data atom of that class.

One automaton is shared by every monitor of a compiled spec, in any thread: reads of
memoised transitions take no lock; anything that interns (a new state, residual or node)
runs under the automaton's lock, so ids stay consistent across threads.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Final

from agentguard.monitor import windows as W
from agentguard.monitor.atoms import (
    Atom,
    Env,
    EventAtom,
    FrozenAtom,
    NonEmpty,
    PastAtom,
    eval_event,
)
from agentguard.monitor.formula import DNF_FALSE, DNF_TRUE, Dnf, Op, Store
from agentguard.monitor.registers import EMPTY_VALUE, Past, Register
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Matcher
from agentguard.trace.model import Call

OTHER: Final = None
"""The name class of a call to a tool the formula never mentions: not a string, so no
tool name (not even ``""``, which a trace may hold and a spec may name) is mistaken for
it."""

NameClass = str | None
Letter = tuple[NameClass, int]


def expand_unknown(name: NameClass, mask: int, unknown: Sequence[int]) -> tuple[Letter, ...]:
    """Every letter a call may be while the atoms at bit positions ``unknown`` are open
    (a result not known yet): each combination of those bits set or clear over ``mask``."""
    if not unknown:
        return ((name, mask),)
    out = []
    for combo in product((0, 1), repeat=len(unknown)):
        m = mask
        for bit, on in zip(unknown, combo, strict=True):
            if on:
                m |= 1 << bit
        out.append((name, m))
    return tuple(out)


CState = tuple[int, tuple[int, ...]]

MAX_LETTERS: Final = 4096
"""Letters of a machine beyond which its alphabet is not enumerated (no exploration)."""


@dataclass(slots=True)
class Automaton:
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
    _data: dict[NameClass, tuple[int, ...]] = field(default_factory=dict)
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
    windows: W.Windows = field(default_factory=W.Windows)
    init: int = 0
    too_large: bool = False
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

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
        self._initial_regs = tuple(self._initial(r) for r in self.registers)
        self.init = self.intern(self.store.residual(self.store.dnf(self.root)), self._initial_regs)

    def _initial(self, reg: Register) -> int:
        """A register's content at position 0 (a window id for a bounded operator)."""
        s = self.store
        if reg.windowed:
            return self.windows.intern(W.initial(s, reg))
        if reg.kind == Past.YESTERDAY:
            return s.residual(DNF_FALSE)
        if reg.kind == Past.WEAK_YESTERDAY:
            return s.residual(DNF_TRUE)
        return s.residual(s.dnf(reg.right if reg.kind == Past.SINCE else reg.left))

    # ------------------------------------------------------------------ basics
    def _event(self, i: int) -> EventAtom:
        a = self.atoms[i]
        if not isinstance(a, EventAtom):  # pragma: no cover - internal invariant
            raise TypeError(a)
        return a

    def _applies(self, i: int, cls: NameClass) -> bool:
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
        with self.lock:
            return self._intern_locked(residual, regs)

    def _intern_locked(self, residual: int, regs: tuple[int, ...]) -> int:
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

    def _content_atoms(self, reg: Register, content: int) -> set[int]:
        if not reg.windowed:
            return self._residual_atoms(content)
        atoms: set[int] = set()
        for _, r in self.windows[content]:
            atoms |= self._residual_atoms(r)
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
            inner = self.store.atoms_of(r.left, self._atoms_memo) | self._content_atoms(r, regs[j])
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
        return list(expand_unknown(cls, mask, unknown))

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
        with self.lock:
            return self._step_locked(cstate, letter, key)

    def _step_locked(self, cstate: int, letter: Letter, key: tuple[int, Letter]) -> int:
        found = self._trans.get(key)
        if found is not None:  # another thread built it meanwhile
            return found
        residual, regs = self.cstates[cstate]
        val = self._valuation(letter)
        s = self.store
        vs: list[int] = []  # each register's content progressed over this call (inner first)
        moved: dict[int, list[W.Entry]] = {}  # a window's entries progressed, by register
        for j, content in enumerate(regs):
            prog = functools.partial(self._prog, val=val, ctx=(letter, tuple(vs)))
            reg = self.registers[j]
            if reg.windowed:
                moved[j] = [(age, s.map_residual(r, prog)) for age, r in self.windows[content]]
                vs.append(s.residual(W.truth(s, reg, (r for _, r in moved[j]))))
            else:
                vs.append(s.map_residual(content, prog))
        ctx = (letter, tuple(vs))
        new_regs = []
        for j, reg in enumerate(self.registers):
            v = s.residuals[vs[j]]
            if reg.windowed:
                new_regs.append(self.windows.intern(W.advance(s, reg, moved[j])))
                continue
            if reg.kind in (Past.YESTERDAY, Past.WEAK_YESTERDAY):
                nxt = self._prog(reg.left, val, ctx)
            elif reg.kind == Past.ONCE:
                nxt = s.d_or(s.dnf(reg.left), v)
            elif reg.kind == Past.HISTORICALLY:
                nxt = s.d_and(s.dnf(reg.left), v)
            else:  # SINCE
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
        if op == Op.TRUE:
            out = DNF_TRUE
        elif op == Op.FALSE:
            out = DNF_FALSE
        elif op == Op.LITERAL:
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
        elif op == Op.AND:
            out = DNF_TRUE
            for c in n[1]:
                out = s.d_and(out, self._prog(c, val, ctx))
        elif op == Op.OR:
            out = DNF_FALSE
            for c in n[1]:
                out = s.d_or(out, self._prog(c, val, ctx))
        elif op == Op.NEXT:
            out = s.d_and(s.dnf(s.lit(self.ne_atom, True)), s.dnf(n[1]))
        elif op == Op.WEAK_NEXT:
            out = s.d_or(s.dnf(s.lit(self.ne_atom, False)), s.dnf(n[1]))
        elif op == Op.UNTIL:
            here = frozenset({frozenset({e})})
            out = s.d_or(self._prog(n[2], val, ctx), s.d_and(self._prog(n[1], val, ctx), here))
        elif op == Op.RELEASE:
            here = frozenset({frozenset({e})})
            out = s.d_and(self._prog(n[2], val, ctx), s.d_or(self._prog(n[1], val, ctx), here))
        elif op == Op.EVENTUALLY_WITHIN:
            rest = s.dnf(s.eventually(n[2], n[1] - 1)) if n[1] > 0 else DNF_FALSE
            out = s.d_or(self._prog(n[2], val, ctx), rest)
        else:  # ALWAYS_WITHIN
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
        if op == Op.LITERAL:
            atom = self.atoms[n[1]]
            if isinstance(atom, PastAtom):
                return bool(EMPTY_VALUE[self.registers[atom.register].kind] == n[2])
            if isinstance(atom, FrozenAtom):
                return False
            return not n[2]
        return op in (Op.TRUE, Op.WEAK_NEXT, Op.RELEASE, Op.ALWAYS_WITHIN)

    def frozen_in(self, cstate: int) -> tuple[int, ...]:
        """Frozen atoms the state still depends on."""
        found = self._frozen_memo.get(cstate)
        if found is None:
            with self.lock:
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
        with self.lock:
            node = s.substitute(s.residual_node(residual), dict(values), memo)
            return self.intern(s.residual(s.dnf(node)), regs)

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
        with self.lock:
            values = {self.accepts(c) for c in self.assignments(cstate)}
        out = values.pop() if len(values) == 1 else None
        self._final_memo[cstate] = out
        return out
