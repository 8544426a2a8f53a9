"""The letters one call gives *every* value of a quantifier at once.

``machine.letters_of(call, {x: v})`` evaluates each data atom of the call's class for one
value; a quantifier asking it for the fresh value and for every value the call mentions
pays that per value and per constraint. When the variable is only ever tested as
``field = x`` (the usual shape: ``refund(order = o)``), one pass suffices: each atom's
other tests are evaluated once, and an atom that passes them can hold only for the one
value its ``x`` fields carry. The call then gives a *generic* letter to every value, and
differs from it only for those few values (``ValueLetters.special``).

Machines with other tests on the variable (``!=``, ``contains``, a path into it, a result
field, a comparison or a result matcher over it) have no plan here and keep asking per
value.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeAlias

from agentguard.language import ast as A
from agentguard.monitor.atoms import EventAtom, FrozenAtom, eval_event
from agentguard.monitor.call_memo import about, hashable
from agentguard.monitor.machine import OTHER, Letter, Machine
from agentguard.monitor.stepping import NameClass, expand_unknown
from agentguard.semantics.registry import Matcher
from agentguard.semantics.values import MISSING, UNKEYED, call_field, common_key, plain_key
from agentguard.semantics.variables import free_variables
from agentguard.trace.model import Call

Literals: TypeAlias = "tuple[tuple[tuple[str | int, ...], Any], ...] | None"


@dataclass(frozen=True, slots=True)
class _Plain:
    bit: int
    atom: EventAtom  # no test on the variable
    question: Any  # its key in the call memo (call_memo.py); None: not shared
    literal: Literals  # its tests as (field, key) pairs, when all are ``field = literal``


@dataclass(frozen=True, slots=True)
class _Keyed:
    bit: int
    rest: EventAtom  # the atom without its ``field = x`` tests
    paths: tuple[tuple[str | int, ...], ...]  # the fields tested against ``x``
    question: Any
    literal: Literals


@dataclass(frozen=True, slots=True)
class _ClassPlan:
    plain: tuple[_Plain, ...]
    keyed: tuple[_Keyed, ...]


@dataclass(frozen=True, slots=True)
class ValueLetters:
    """The call's letters: ``generic`` for every value but the ``special`` ones."""

    generic: tuple[Letter, ...]
    special: dict[Any, tuple[Letter, ...]]  # plain_key(value) -> its letters


class LetterPlan:
    """Per tool-name class of one machine: which atoms test the variable, and how."""

    def __init__(self, machine: Machine, classes: dict[NameClass, _ClassPlan]) -> None:
        self.machine = machine
        self.classes = classes
        self._alike: dict[Letter, ValueLetters] = {}  # read-only, shared between calls

    @classmethod
    def build(cls, machine: Machine, var: str) -> LetterPlan | None:
        """The plan, or None when the machine tests ``var`` in a way one pass cannot follow."""
        if any(isinstance(a, FrozenAtom) for a in machine.atoms):
            return None
        classes: dict[NameClass, _ClassPlan] = {}
        for name in (*machine.names, OTHER):
            plain: list[_Plain] = []
            keyed: list[_Keyed] = []
            for bit, i in enumerate(machine._data[name]):
                atom = machine._event(i)
                if atom.result is not None and var in free_variables(atom.result):
                    return None
                rest, paths = [], []
                for t in atom.tests:
                    if var not in free_variables(t.value):
                        rest.append(t)
                        continue
                    plain_var = isinstance(t.value, A.Var) and not t.value.path
                    if not plain_var or t.op != "=" or not t.field.path or t.field.is_result:
                        return None
                    paths.append(t.field.path)
                if paths:
                    reduced = EventAtom(atom.tool, tuple(rest), atom.result, atom.outcome)
                    keyed.append(
                        _Keyed(bit, reduced, tuple(paths), _question(reduced), _literals(reduced))
                    )
                else:
                    plain.append(_Plain(bit, atom, _question(atom), _literals(atom)))
            classes[name] = _ClassPlan(tuple(plain), tuple(keyed))
        return cls(machine, classes)

    def _event(
        self, atom: EventAtom, question: Any, literal: Literals, call: Call, pending: bool
    ) -> bool | None:
        """An atom without the variable on ``call``, shared across constraints that have it."""
        if literal is not None:  # compare keys of fields read once per call
            for path, key in literal:
                got = about(call, ("field", path), partial(_field_key, call, path))
                if got is UNKEYED:
                    break
                if got != key:
                    return False
            else:
                return True
        match = self.machine.match
        if question is None:
            return _evaluate(atom, call, match, pending)
        return about(
            call, (question, match, pending), partial(_evaluate, atom, call, match, pending)
        )

    def letters(self, call: Call, *, pending: bool) -> ValueLetters | None:
        """Every value's letters for ``call``; None when a field value has no plain key."""
        m = self.machine
        name = call.name if call.name in m.names else OTHER
        plan = self.classes[name]
        mask = 0
        unknown: list[int] = []
        for p in plan.plain:
            v = self._event(p.atom, p.question, p.literal, call, pending)
            if v is None and pending:
                unknown.append(p.bit)
            elif v:
                mask |= 1 << p.bit
        special: dict[Any, tuple[int, list[int]]] = {}
        for k in plan.keyed:
            v = self._event(k.rest, k.question, k.literal, call, pending)
            if v is False or (v is None and not pending):
                continue
            key = about(call, ("key", k.paths), partial(common_key, call, k.paths))
            if key is UNKEYED:
                return None
            if key is MISSING:
                continue  # equal to no value: false for every one
            bits, unknowns = special.get(key, (0, []))
            if v is None:
                special[key] = (bits, [*unknowns, k.bit])
            else:
                special[key] = (bits | 1 << k.bit, unknowns)
        if not special and not unknown:  # the usual case: one letter for everyone
            found = self._alike.get((name, mask))
            if found is None:
                found = self._alike[(name, mask)] = ValueLetters(((name, mask),), {})
            return found
        generic = expand_unknown(name, mask, unknown)
        return ValueLetters(
            generic,
            {
                key: expand_unknown(name, mask | bits, [*unknown, *extra])
                for key, (bits, extra) in special.items()
            },
        )


def _literals(atom: EventAtom) -> Literals:
    """``atom``'s tests as (field, plain key) pairs when every one is ``field = literal``
    on an argument (then it holds iff each field's key equals the literal's), else None."""
    if atom.outcome is not None or atom.result is not None:
        return None
    out = []
    for t in atom.tests:
        if t.op != "=" or not isinstance(t.value, A.Literal) or not t.field.path:
            return None
        key = plain_key(t.value.value)
        if t.field.is_result or key is UNKEYED or key is MISSING:
            return None
        out.append((t.field.path, key))
    return tuple(out)


def _field_key(call: Call, path: tuple[str | int, ...]) -> Any:
    """The plain key of a call field (``MISSING`` when absent: equal to no literal)."""
    got = call_field(call, path)
    return MISSING if got is MISSING else plain_key(got)


_QUESTIONS: dict[EventAtom, int] = {}
_QUESTIONS_LOCK = threading.Lock()


def _question(atom: EventAtom) -> Any:
    """A small key for ``atom`` (equal atoms, one key), cheap to hash on every call;
    None for an atom with unhashable literals inside."""
    if not hashable(atom):
        return None
    with _QUESTIONS_LOCK:
        return ("event", _QUESTIONS.setdefault(atom, len(_QUESTIONS)))


def _evaluate(atom: EventAtom, call: Call, match: Matcher, pending: bool) -> bool | None:
    return eval_event(atom, call, {}, match, pending=pending)
