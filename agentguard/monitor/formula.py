"""Hash-consed LTLf formulas in negation normal form, and residuals in canonical DNF.

The monitor works on two layers:

* **nodes**: interned tuples ``(op, ...)`` with integer ids; negation is pushed to the
  literals (every operator has its dual), booleans are flattened, sorted and deduplicated;
* **residuals**: what is left to satisfy after a prefix, kept as a minimised DNF (a
  frozenset of cubes, each a frozenset of *element* ids: literals and temporal nodes).
  Every element of a residual is a subformula of the original, so the set of residuals
  reachable by progression is finite; interning them gives a lazily built automaton.

Node shapes, by opcode (:class:`Op`): ``(TRUE,)`` ``(FALSE,)`` ``(LITERAL, atom,
positive)`` ``(AND, ids)`` ``(OR, ids)`` ``(NEXT, c)`` (strong) ``(WEAK_NEXT, c)``
``(UNTIL, a, b)`` ``(RELEASE, a, b)`` ``(EVENTUALLY_WITHIN, k, c)`` ``(ALWAYS_WITHIN, k, c)``.
``F φ`` is ``true U φ``, ``G φ`` is ``false R φ``, ``φ W ψ`` is ``ψ R (φ | ψ)``. The
opcode strings are short because saved states carry them (``agentguard.monitor/1``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

Node = tuple[Any, ...]
Cube = frozenset[int]
Dnf = frozenset[Cube]


class Op:
    """The opcode at index 0 of every node (one name per meaning; past-time operators are
    registers, see :mod:`agentguard.monitor.registers`)."""

    TRUE: Final = "T"
    FALSE: Final = "F"
    LITERAL: Final = "L"
    AND: Final = "A"
    OR: Final = "O"
    NEXT: Final = "X"
    WEAK_NEXT: Final = "N"
    UNTIL: Final = "U"
    RELEASE: Final = "R"
    EVENTUALLY_WITHIN: Final = "FB"
    ALWAYS_WITHIN: Final = "GB"
    ALL: Final = frozenset({"T", "F", "L", "A", "O", "X", "N", "U", "R", "FB", "GB"})


TRUE = 0
"""Node id of ``true`` (and residual id of the true residual)."""
FALSE = 1
"""Node id of ``false`` (and residual id of the false residual)."""
DNF_TRUE: Dnf = frozenset({frozenset()})
DNF_FALSE: Dnf = frozenset()
_NO_BOUNDS: Mapping[tuple[str, int], int] = MappingProxyType({})


class Store:
    """Interning tables for nodes and residuals of one compiled machine."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._ids: dict[Node, int] = {}
        self._neg: dict[int, int] = {}
        self._dnf: dict[int, Dnf] = {}
        self._comp: dict[Cube, frozenset[int]] = {}
        self._within: dict[Cube, Mapping[tuple[str, int], int]] = {}
        self.residuals: list[Dnf] = []
        self._residual_ids: dict[Dnf, int] = {}
        self.mk((Op.TRUE,))
        self.mk((Op.FALSE,))
        self.residual(DNF_TRUE)  # residual 0 is true
        self.residual(DNF_FALSE)  # residual 1 is false

    # ------------------------------------------------------------------ nodes
    def mk(self, node: Node) -> int:
        found = self._ids.get(node)
        if found is None:
            found = len(self.nodes)
            self.nodes.append(node)
            self._ids[node] = found
        return found

    def lit(self, atom: int, positive: bool = True) -> int:
        return self.mk((Op.LITERAL, atom, positive))

    def and_(self, items: Iterable[int]) -> int:
        return self._junction(Op.AND, items, TRUE, FALSE)

    def or_(self, items: Iterable[int]) -> int:
        return self._junction(Op.OR, items, FALSE, TRUE)

    def _junction(self, op: str, items: Iterable[int], unit: int, zero: int) -> int:
        out: set[int] = set()
        for i in items:
            if i == unit:
                continue
            if i == zero:
                return zero
            node = self.nodes[i]
            if node[0] == op:
                out.update(node[1])
            else:
                out.add(i)
        for i in out:
            node = self.nodes[i]
            if node[0] == Op.LITERAL and self._ids.get((Op.LITERAL, node[1], not node[2])) in out:
                return zero
        if not out:
            return unit
        if len(out) == 1:
            return next(iter(out))
        return self.mk((op, tuple(sorted(out))))

    def next_(self, c: int, strong: bool) -> int:
        if strong and c == FALSE:
            return FALSE
        if not strong and c == TRUE:
            return TRUE
        return self.mk((Op.NEXT if strong else Op.WEAK_NEXT, c))

    # Atom 0 of every machine is "this position exists" (NonEmpty). Simplifications keep
    # the empty-suffix value exact: ``a U true`` is "non-empty", not true.
    @property
    def nonempty(self) -> int:
        return self.lit(0, True)

    @property
    def end(self) -> int:
        return self.lit(0, False)

    def until(self, a: int, b: int) -> int:
        if b == FALSE:
            return FALSE
        if b == TRUE:
            return self.nonempty
        if a == FALSE:
            return self.and_((self.nonempty, b))
        return self.mk((Op.UNTIL, a, b))

    def release(self, a: int, b: int) -> int:
        if b == TRUE:
            return TRUE
        if b == FALSE:
            return self.end
        if a == TRUE:
            return self.or_((self.end, b))
        return self.mk((Op.RELEASE, a, b))

    def eventually(self, c: int, bound: int | None = None) -> int:
        if bound is None:
            return self.until(TRUE, c)
        if c == FALSE:
            return FALSE
        return self.nonempty if c == TRUE else self.mk((Op.EVENTUALLY_WITHIN, bound, c))

    def always(self, c: int, bound: int | None = None) -> int:
        if bound is None:
            return self.release(FALSE, c)
        if c == TRUE:
            return TRUE
        return self.end if c == FALSE else self.mk((Op.ALWAYS_WITHIN, bound, c))

    def neg(self, i: int) -> int:
        found = self._neg.get(i)
        if found is not None:
            return found
        n = self.nodes[i]
        op = n[0]
        if op == Op.TRUE:
            out = FALSE
        elif op == Op.FALSE:
            out = TRUE
        elif op == Op.LITERAL:
            out = self.lit(n[1], not n[2])
        elif op == Op.AND:
            out = self.or_(self.neg(c) for c in n[1])
        elif op == Op.OR:
            out = self.and_(self.neg(c) for c in n[1])
        elif op == Op.NEXT:
            out = self.next_(self.neg(n[1]), strong=False)
        elif op == Op.WEAK_NEXT:
            out = self.next_(self.neg(n[1]), strong=True)
        elif op == Op.UNTIL:
            out = self.release(self.neg(n[1]), self.neg(n[2]))
        elif op == Op.RELEASE:
            out = self.until(self.neg(n[1]), self.neg(n[2]))
        elif op == Op.EVENTUALLY_WITHIN:
            out = self.always(self.neg(n[2]), n[1])
        else:  # ALWAYS_WITHIN
            out = self.eventually(self.neg(n[2]), n[1])
        self._neg[i] = out
        self._neg[out] = i
        return out

    def substitute(
        self, i: int, values: dict[int, bool], memo: dict[int, int] | None = None
    ) -> int:
        """Replace the literals of the atoms in ``values`` by constants."""
        memo = {} if memo is None else memo
        found = memo.get(i)
        if found is not None:
            return found
        n = self.nodes[i]
        op = n[0]
        out = i
        if op == Op.LITERAL:
            if n[1] in values:
                out = TRUE if values[n[1]] == n[2] else FALSE
        elif op == Op.AND:
            out = self.and_(self.substitute(c, values, memo) for c in n[1])
        elif op == Op.OR:
            out = self.or_(self.substitute(c, values, memo) for c in n[1])
        elif op in (Op.NEXT, Op.WEAK_NEXT):
            out = self.next_(self.substitute(n[1], values, memo), op == Op.NEXT)
        elif op == Op.UNTIL:
            out = self.until(
                self.substitute(n[1], values, memo), self.substitute(n[2], values, memo)
            )
        elif op == Op.RELEASE:
            out = self.release(
                self.substitute(n[1], values, memo), self.substitute(n[2], values, memo)
            )
        elif op == Op.EVENTUALLY_WITHIN:
            out = self.eventually(self.substitute(n[2], values, memo), n[1])
        elif op == Op.ALWAYS_WITHIN:
            out = self.always(self.substitute(n[2], values, memo), n[1])
        memo[i] = out
        return out

    def atoms_of(self, i: int, memo: dict[int, frozenset[int]]) -> frozenset[int]:
        """Every atom whose literal occurs in node ``i``."""
        found = memo.get(i)
        if found is not None:
            return found
        n = self.nodes[i]
        op = n[0]
        if op == Op.LITERAL:
            out = frozenset({n[1]})
        elif op in (Op.AND, Op.OR):
            out = frozenset().union(*(self.atoms_of(c, memo) for c in n[1]))
        elif op in (Op.NEXT, Op.WEAK_NEXT):
            out = self.atoms_of(n[1], memo)
        elif op in (Op.UNTIL, Op.RELEASE):
            out = self.atoms_of(n[1], memo) | self.atoms_of(n[2], memo)
        elif op in (Op.EVENTUALLY_WITHIN, Op.ALWAYS_WITHIN):
            out = self.atoms_of(n[2], memo)
        else:
            out = frozenset()
        memo[i] = out
        return out

    # ------------------------------------------------------------------ residuals
    def dnf(self, i: int) -> Dnf:
        found = self._dnf.get(i)
        if found is not None:
            return found
        n = self.nodes[i]
        if n[0] == Op.TRUE:
            out = DNF_TRUE
        elif n[0] == Op.FALSE:
            out = DNF_FALSE
        elif n[0] == Op.AND:
            out = DNF_TRUE
            for c in n[1]:
                out = self.d_and(out, self.dnf(c))
        elif n[0] == Op.OR:
            out = DNF_FALSE
            for c in n[1]:
                out = self.d_or(out, self.dnf(c))
        else:
            out = frozenset({frozenset({i})})
        self._dnf[i] = out
        return out

    def d_or(self, a: Dnf, b: Dnf) -> Dnf:
        if not a:
            return b
        if not b or a == b:
            return a
        return self._minimise(a | b)

    def d_and(self, a: Dnf, b: Dnf) -> Dnf:
        if not a or not b:
            return DNF_FALSE
        if a == DNF_TRUE:
            return b
        if b == DNF_TRUE:
            return a
        cubes = set()
        comp, within, join = self._complements, self._bounded, self._join
        for x in a:
            cx = comp(x)
            if not cx.isdisjoint(x):
                continue
            wx = within(x)
            for y in b:
                cy = comp(y)
                if cx.isdisjoint(y) and cy.isdisjoint(x) and cy.isdisjoint(y):
                    cubes.add(join(x, y, wx, within(y)))
        return self._minimise(frozenset(cubes))

    def _bounded(self, cube: Cube) -> Mapping[tuple[str, int], int]:
        """The cube's bounded elements ``F[<=j] c`` / ``G[<=j] c``, by (opcode, operand)
        (memoised; most cubes have none and share one empty mapping)."""
        found = self._within.get(cube)
        if found is None:
            out: dict[tuple[str, int], int] = {}
            for e in cube:
                n = self.nodes[e]
                if n[0] in (Op.EVENTUALLY_WITHIN, Op.ALWAYS_WITHIN):
                    out[n[0], n[2]] = e  # a normalised cube has one per key
            found = self._within[cube] = out or _NO_BOUNDS
        return found

    def _join(
        self, x: Cube, y: Cube, wx: Mapping[tuple[str, int], int], wy: Mapping[tuple[str, int], int]
    ) -> Cube:
        """``x & y`` with one bounded element per (opcode, operand): ``F[<=i] c & F[<=j] c``
        is ``F[<=min(i, j)] c`` and ``G[<=i] c & G[<=j] c`` is ``G[<=max(i, j)] c``. Without
        this a run of ``G(a -> F[<=k] b)`` piled up to k obligations in one cube, and each
        call cost O(k). The result's bounded elements are merged from the operands' (the
        smaller side walked), never scanned again."""
        if not wy:
            out = x | y
            self._within.setdefault(out, wx)
            return out
        if not wx:
            out = x | y
            self._within.setdefault(out, wy)
            return out
        if len(wx) < len(wy):
            x, y, wx, wy = y, x, wy, wx
        merged = dict(wx)
        drop = []
        for key, ey in wy.items():
            ex = merged.get(key)
            if ex is None:
                merged[key] = ey
            elif ex != ey:
                bx, by = self.nodes[ex][1], self.nodes[ey][1]
                if (by < bx) == (key[0] == Op.EVENTUALLY_WITHIN):  # y's is the tighter
                    merged[key] = ey
                    drop.append(ex)
                else:
                    drop.append(ey)
        out = (x | y).difference(drop) if drop else x | y
        self._within.setdefault(out, merged)
        return out

    def _minimise(self, cubes: frozenset[Cube]) -> Dnf:
        """Drop every cube that implies another (the disjunction keeps the weaker one).

        A cube implies another that is a subset of it, or that differs only in bounds:
        ``G[<=5] c`` implies ``G[<=3] c`` and ``F[<=3] c`` implies ``F[<=5] c``. Without the
        second rule ``F[<=k] G[<=k] a`` kept one cube per pending ``G`` (a build of 37 s at
        k = 100, and calls costing O(k) each).
        """
        if len(cubes) < 2:
            return cubes
        bounded = any(self._bounded(c) for c in cubes)
        kept: list[Cube] = []
        for cube in sorted(cubes, key=len):
            if not bounded:
                if not any(k <= cube for k in kept):
                    kept.append(cube)
                continue
            if any(self._implies(cube, k) for k in kept):
                continue
            # a kept cube of the same length may be the stronger one (G[<=5] c vs G[<=3] c)
            kept = [k for k in kept if len(k) < len(cube) or not self._implies(k, cube)]
            kept.append(cube)
        return frozenset(kept)

    def _implies(self, cube: Cube, other: Cube) -> bool:
        """Does ``cube`` imply ``other``: each element of ``other`` is in ``cube``, or is a
        bounded element that ``cube`` holds with a tighter bound?"""
        if other <= cube:
            return True
        within = self._bounded(cube)
        for e in other - cube:
            n = self.nodes[e]
            if n[0] not in (Op.EVENTUALLY_WITHIN, Op.ALWAYS_WITHIN):
                return False
            mine = within.get((n[0], n[2]))
            if mine is None:
                return False
            bound = self.nodes[mine][1]
            if bound > n[1] if n[0] == Op.EVENTUALLY_WITHIN else bound < n[1]:
                return False
        return True

    def _complements(self, cube: Cube) -> frozenset[int]:
        """The ids of the negations of the cube's literals (memoised: a cube meets one
        of them iff the conjunction is contradictory)."""
        found = self._comp.get(cube)
        if found is None:
            out = set()
            for e in cube:
                n = self.nodes[e]
                if n[0] == Op.LITERAL:
                    other = self._ids.get((Op.LITERAL, n[1], not n[2]))
                    if other is not None:
                        out.add(other)
            found = self._comp[cube] = frozenset(out)
        return found

    def residual(self, d: Dnf) -> int:
        found = self._residual_ids.get(d)
        if found is None:
            found = len(self.residuals)
            self.residuals.append(d)
            self._residual_ids[d] = found
        return found

    def residual_node(self, r: int) -> int:
        """The residual as one node (an Or of Ands)."""
        return self.or_(self.and_(cube) for cube in self.residuals[r])

    def map_residual(self, r: int, fn: Callable[[int], Dnf]) -> int:
        """A new residual with every element replaced by ``fn(element)``."""
        out = DNF_FALSE
        for cube in self.residuals[r]:
            part = DNF_TRUE
            for e in cube:
                part = self.d_and(part, fn(e))
                if not part:
                    break
            out = self.d_or(out, part)
            if out == DNF_TRUE:
                break
        return self.residual(out)
