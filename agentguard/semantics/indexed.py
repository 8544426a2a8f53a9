"""Decide a top-level ``forall``/``exists`` from an index of the values each atom matches.

The plain way evaluates the body once per domain value: 50 constraints over 10,000
orders are 500,000 instances, each at least a few microseconds, whatever the trace says
about that order. Most instances are alike: in ``G(refund(order = o, lane = 3) -> O
lookup(order = o))`` every order never refunded in lane 3 makes the left side false at
every position, so the body holds whatever ``lookup`` did. This module does the work per
*value that an atom matches*, not per domain value:

1. For each event atom that tests the variable (``field = x``), one pass over the calls
   that pass its other tests gives a map value -> positions (shared by every constraint
   that has the same atom, and narrowed by the evaluator's equality index).
2. The atoms are ordered from the fewest matched values to the most. The body is folded
   with the ``k`` rarest atoms set to false (an atom with no match for ``v`` is false at
   every position, exactly): the smallest ``k`` for which the fold is a constant
   decides, in one step, every value that none of those ``k`` atoms matches.
3. The values those atoms do match are evaluated one by one; a step-free body whose other
   parts are constant depends only on its atoms' stutter-reduced word (see
   :mod:`agentguard.semantics.compressed`), so instances with the same word share one
   evaluation.

The answer is the first decisive value in domain order, as the plain loop gives.

Shapes that take the plain path instead: the variable anywhere but in ``field = x``
tests on event atoms (``!=``, ``contains``, ``<``, a path into the variable, a result
field, a comparison, a trace or user predicate over it, a nested quantifier using it),
trace values that are not plain JSON, and any error while indexing (the plain path then
raises exactly as it always did).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import numpy as np
from typing_extensions import assert_never

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.walk import children
from agentguard.semantics import vectors as V
from agentguard.semantics.event_tests import EqualityIndex, passes
from agentguard.semantics.trace_index import TraceIndex
from agentguard.semantics.values import (
    MISSING,
    UNKEYED,
    common_key,
    freeze,
    outcome_is,
    plain_key,
)

Env: TypeAlias = Mapping[str, Any]
Hits: TypeAlias = dict[Any, list[int]]  # freeze(value) -> ascending positions
Decision: TypeAlias = "tuple[Any] | None"


class Evaluator(Protocol):
    """What the index needs from the evaluator that owns it (no import: no cycle)."""

    @property
    def n(self) -> int: ...

    @property
    def idx(self) -> TraceIndex: ...

    @property
    def eq(self) -> EqualityIndex: ...

    def value(self, f: A.Formula, env: Env) -> bool | V.BoolVec: ...

    def free_vars(self, f: Any) -> frozenset[str]: ...

    def pin(self, node: Any) -> None: ...

    def test_operand(self, test: A.Test, env: Env) -> Any: ...

    def instance_holds(self, body: A.Formula, env: Env) -> bool: ...

    def holds_at_start(
        self, body: A.Formula, env: Env, hits: Callable[[A.Event], Sequence[int] | None]
    ) -> bool: ...

    def step_free(self, f: A.Formula) -> bool: ...


class _Nobody:
    """A value equal to nothing: the binding of every value no atom matches."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no value>"


NOBODY = _Nobody()


class NotIndexed(Exception):
    """This formula or trace takes the plain path (internal; never escapes)."""


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a quantifier's body looks like to the index (computed once per formula)."""

    atoms: tuple[A.Event, ...]  # distinct event atoms that test the variable
    step_free: bool


class Indexed:
    """Indexed decisions of top-level quantifiers, sharing one evaluator's caches."""

    def __init__(self, ev: Evaluator) -> None:
        self.ev = ev
        self._shapes: dict[int, _Shape | None] = {}
        self._hits: dict[Any, Hits] = {}
        self._domains: dict[int, dict[Any, int]] = {}
        self._words: dict[Any, bool] = {}
        self._decided: dict[int, Decision] = {}  # closed quantifiers (asked again by explain)

    # ------------------------------------------------------------------ entry
    def decide(self, f: A.Quantified, values: Sequence[Any], env: Env) -> Decision:
        """The first decisive value of ``f`` at position 0 (see the module docstring).

        Raises :class:`NotIndexed` when ``f`` or the trace needs the plain path.
        """
        shape = self._shape(f)
        if shape is None or not isinstance(values, list) or not values:
            raise NotIndexed
        closed = not self.ev.free_vars(f)
        if closed and id(f) in self._decided:
            return self._decided[id(f)]
        try:
            found = self._decide(f, shape, values, env)
        except AgentGuardError:
            raise NotIndexed from None
        if closed:
            self._decided[id(f)] = found  # f is pinned by _shape
        return found

    def _decide(self, f: A.Quantified, shape: _Shape, values: Sequence[Any], env: Env) -> Decision:
        want = f.kind == "exists"
        keys = self._domain_keys(values)
        hits = [self._atom_hits(a, f.var, env) for a in shape.atoms]
        globals_memo: dict[int, bool | None] = {}
        rare, rest = self._rarest(f, shape, hits, env, globals_memo)
        glob = tuple(self._global_values(f.body, f.var, env, globals_memo))
        word_ok = shape.step_free and None not in glob
        single: dict[Any, None] = {}
        for i in rare:
            single.update(dict.fromkeys(hits[i]))
        best: int | None = None
        for key in single:
            idx = keys.get(key)
            if idx is None or (best is not None and idx > best):
                continue
            truth = self._instance(f, hits, key, values[idx], env, glob if word_ok else None)
            if truth == want:
                best = idx
        odd = keys.get(UNKEYED)
        if odd is not None:  # values with no plain key: evaluated one by one
            for idx, v in enumerate(values):
                if best is not None and idx > best:
                    break
                if (
                    plain_key(v) is UNKEYED
                    and self.ev.instance_holds(f.body, {**env, f.var: v}) == want
                ):
                    best = idx
                    break
        if rest is None:  # no fold decides: every value with no match at all is NOBODY
            rest = self.ev.instance_holds(f.body, {**env, f.var: NOBODY})
        if rest == want:
            for idx, v in enumerate(values):
                if best is not None and idx >= best:
                    break
                key = plain_key(v)
                if key is not UNKEYED and key not in single:
                    best = idx
                    break
        return None if best is None else (values[best],)

    def _rarest(
        self,
        f: A.Quantified,
        shape: _Shape,
        hits: list[Hits],
        env: Env,
        memo: dict[int, bool | None],
    ) -> tuple[tuple[int, ...], bool | None]:
        """The atoms to follow value by value: the set with the fewest matched values
        whose falsity folds the body to a constant (that constant decides every other
        value), else all of them (and None: the rest is evaluated as NOBODY)."""
        m = len(hits)
        everyone = tuple(range(m))
        if m > _MAX_SUBSETS:
            order = sorted(everyone, key=lambda i: len(hits[i]))
            candidates = [tuple(order[:k]) for k in range(m + 1)]
        else:
            candidates = [tuple(i for i in everyone if mask >> i & 1) for mask in range(1 << m)]
            candidates.sort(key=lambda c: sum(len(hits[i]) for i in c))
        for chosen in candidates:
            folded = self._fold(f.body, f.var, {shape.atoms[i] for i in chosen}, env, memo)
            if folded is not None:
                return chosen, folded
        return everyone, None

    # ------------------------------------------------------------------ shape
    def _shape(self, f: A.Quantified) -> _Shape | None:
        key = id(f)
        if key in self._shapes:
            return self._shapes[key]
        self.ev.pin(f)
        atoms: dict[A.Event, None] = {}
        shape: _Shape | None = None
        if self._collect(f.body, f.var, atoms):
            shape = _Shape(tuple(atoms), self.ev.step_free(f.body))
        self._shapes[key] = shape
        return shape

    def _collect(self, f: A.Formula, var: str, atoms: dict[A.Event, None]) -> bool:
        """Gather the atoms testing ``var``; False when ``var`` appears anywhere else."""
        if var not in self.ev.free_vars(f):
            return True
        if isinstance(f, A.Event):
            for t in f.tests:
                if var not in self.ev.free_vars(t.value):
                    continue
                plain = isinstance(t.value, A.Var) and not t.value.path
                path = t.field.path
                if not plain or t.op != "=" or not path or path[0] == "result":
                    return False
            atoms[f] = None
            return True
        if isinstance(f, (A.Compare, A.UserPredicate, A.TracePredicate, A.Quantified)):
            return False
        return all(self._collect(c, var, atoms) for c in children(f))

    # ------------------------------------------------------------------ hits
    def _atom_hits(self, f: A.Event, var: str, env: Env) -> Hits:
        """value -> positions where ``f`` holds with ``var`` bound to that value."""
        fixed = [(t, self.ev.test_operand(t, env)) for t in f.tests if not _tests_var(t, var)]
        paths = [t.field.path for t in f.tests if _tests_var(t, var)]
        try:
            cache_key: Any = (f, var, tuple(freeze(v) for _, v in fixed))
            hash(cache_key)
        except TypeError:
            cache_key = None
        if cache_key is not None:
            found = self._hits.get(cache_key)
            if found is not None:
                return found
        out: Hits = {}
        calls = self.ev.idx.trace.calls
        for p in self.ev.eq.candidates(f, fixed):
            call = calls[p]
            if f.outcome is not None and not outcome_is(call, f.outcome):
                continue
            if fixed and not passes(call, f, fixed):
                continue
            key = common_key(call, paths)
            if key is UNKEYED:
                raise NotIndexed  # a value whose equality the index cannot mirror
            if key is not MISSING:
                out.setdefault(key, []).append(p)
        if cache_key is not None:
            self._hits[cache_key] = out
        return out

    def _domain_keys(self, values: Sequence[Any]) -> dict[Any, int]:
        """freeze(value) -> its first index in ``values`` (``UNKEYED`` for the non-plain)."""
        key = id(values)
        found = self._domains.get(key)
        if found is None:
            found = {}
            for i, v in enumerate(values):
                found.setdefault(plain_key(v), i)
            found.pop(MISSING, None)  # equal to nothing: it takes the NOBODY class below
            self._domains[key] = found
            self.ev.pin(values)
        return found

    # ------------------------------------------------------------------ instances
    def _instance(
        self,
        f: A.Quantified,
        hits: list[Hits],
        key: Any,
        value: Any,
        env: Env,
        glob: tuple[bool | None, ...] | None,
    ) -> bool:
        """The body's truth for one value; ``glob`` (the constant parts) enables the
        word cache, None evaluates it directly."""
        if glob is None:
            return self.ev.instance_holds(f.body, {**env, f.var: value})
        marks: dict[int, int] = {}
        bit = 1
        for h in hits:
            for p in h.get(key, ()):
                marks[p] = marks.get(p, 0) | bit
            bit <<= 1
        word: list[int] = []
        last = -1
        previous = -1
        for p in sorted(marks):
            if p > last + 1 and previous != 0:
                word.append(0)
                previous = 0
            letter = marks[p]
            if letter != previous:
                word.append(letter)
                previous = letter
            last = p
        if last < self.ev.n - 1 and previous != 0:
            word.append(0)
        reduced = tuple(word)
        wkey = (id(f), glob, reduced)
        found = self._words.get(wkey)
        if found is None:  # the first value with this word: evaluated on its known hits
            atoms = self._shape(f)
            assert atoms is not None
            known = {a: h.get(key, []) for a, h in zip(atoms.atoms, hits, strict=True)}
            found = self.ev.holds_at_start(f.body, {**env, f.var: value}, known.get)
            self._words[wkey] = found
        return found

    # ------------------------------------------------------------------ folding
    def _global(self, g: A.Formula, env: Env, memo: dict[int, bool | None]) -> bool | None:
        """A subformula without the variable: its value if the same at every position."""
        key = id(g)
        if key not in memo:
            value = self.ev.value(g, env)
            if isinstance(value, bool):
                memo[key] = value
            else:
                first = bool(value[0])
                memo[key] = first if bool(np.all(value == first)) else None
        return memo[key]

    def _global_values(
        self, f: A.Formula, var: str, env: Env, memo: dict[int, bool | None]
    ) -> list[bool | None]:
        if var not in self.ev.free_vars(f):
            return [self._global(f, env, memo)]
        if isinstance(f, A.Event):
            return []
        out: list[bool | None] = []
        for c in children(f):
            out.extend(self._global_values(c, var, env, memo))
        return out

    def _fold(
        self,
        f: A.Formula,
        var: str,
        false: set[A.Event],
        env: Env,
        memo: dict[int, bool | None],
    ) -> bool | None:
        """``f`` with the ``false`` atoms false: a constant at every position, else None."""
        if var not in self.ev.free_vars(f):
            return self._global(f, env, memo)
        if isinstance(f, A.Event):
            return False if f in false else None
        if isinstance(f, A.Not):
            v = self._fold(f.operand, var, false, env, memo)
            return None if v is None else not v
        if isinstance(f, (A.Compare, A.UserPredicate, A.TracePredicate, A.Quantified, A.Const)):
            return None  # a Const has no variable; the others are ruled out by _collect
        if isinstance(f, (A.Next, A.Yesterday)):
            v = self._fold(f.operand, var, false, env, memo)
            # X false / Y false are false everywhere, N true / Z true true everywhere
            return v if v is not None and v != f.strong else None
        if isinstance(f, (A.Eventually, A.Always, A.Once, A.Historically)):
            if f.bound is not None and f.bound < 0:
                return None
            return self._fold(f.operand, var, false, env, memo)  # the window holds i itself
        a = self._fold(f.left, var, false, env, memo)
        b = self._fold(f.right, var, false, env, memo)
        if isinstance(f, A.And):
            return False if False in (a, b) else (True if a is True and b is True else None)
        if isinstance(f, A.Or):
            return True if True in (a, b) else (False if a is False and b is False else None)
        if isinstance(f, A.Implies):
            if a is False or b is True:
                return True
            return False if a is True and b is False else None
        if isinstance(f, A.Iff):
            return None if a is None or b is None else a == b
        if isinstance(f, (A.Until, A.Since)):  # b decides alone; a false leaves b
            return b if b is not None else None
        if isinstance(f, A.WeakUntil):
            if a is True or b is True:
                return True
            return b if a is False else None
        if isinstance(f, A.Release):
            if b is not None:
                return b
            return None
        assert_never(f)


_MAX_SUBSETS = 5
"""Atoms up to which every subset is tried as the set to follow (2^m folds)."""


def _tests_var(t: A.Test, var: str) -> bool:
    return isinstance(t.value, A.Var) and t.value.name == var and not t.value.path
