"""``lint --witness``: a shortest trace satisfying the whole spec, or the proof none does.

The conjunction of the quantifier-free constraints is one automaton; its accepting
states are found breadth first (so the first is a shortest abstract trace). Each
abstract trace is turned into concrete calls (argument values chosen to make the
letter's tests true) and *verified* with :func:`verify_trace` against the whole spec,
quantified and end-of-run constraints included: a printed witness is always a real one.
When the automaton has no accepting state at all, the proof is a minimal conflicting
set of constraints.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentguard.analysis.search import accepting_paths, ordered_letters
from agentguard.analysis.temporal import (
    JOINT_BUDGET,
    WITNESS_SECONDS,
    facts_of,
    is_automaton,
    joint_machine,
    minimal_conflict,
)
from agentguard.language import ast as A
from agentguard.monitor.atoms import EventAtom
from agentguard.monitor.compile import compile_plan
from agentguard.monitor.machine import OTHER, Letter, Machine
from agentguard.scoring import verify_trace
from agentguard.scoring.verify import as_trace
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Matcher, Registry
from agentguard.semantics.values import compile_regex

MAX_CANDIDATES = 200
"""Abstract traces turned into calls and verified before giving up."""

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Witness:
    """The outcome of the search.

    ``records``: a shortest verified satisfying trace (``records`` format, paste-able into
    ``verify_trace`` or a ``.json`` trace file), None when none was found; ``nonempty``:
    the shortest verified one with at least one call, when the shortest is empty.
    ``conflict``: constraint names proven jointly unsatisfiable (the proof that no
    trace satisfies the spec); ``message`` says which case this is.
    """

    records: list[Record] | None
    nonempty: list[Record] | None
    conflict: tuple[str, ...]
    message: str

    @property
    def proven_unsatisfiable(self) -> bool:
        return bool(self.conflict)


def find_witness(
    spec: A.Spec, *, registry: Registry | None = None, match: Matcher | None = None
) -> Witness:
    """Search a shortest satisfying trace of ``spec`` (see the module docstring)."""
    m = match or values_match
    auto: list[A.Constraint] = []
    for c in spec.constraints:
        plan = compile_plan(c.formula, m)
        if facts_of(plan).unsatisfiable:
            return Witness(
                None,
                None,
                (c.name,),
                f"no trace satisfies the spec: constraint {c.name!r} is unsatisfiable",
            )
        if is_automaton(plan):
            auto.append(c)
    machine = joint_machine([c.formula for c in auto], m)
    if machine is None:
        return _try(spec, [[]], registry, match, "no constraint has an automaton to search")
    deadline = time.monotonic() + WITNESS_SECONDS
    proof = next(iter(accepting_paths(machine, JOINT_BUDGET, deadline=deadline)), _EXHAUSTED)
    if proof is _EXHAUSTED:
        conflict = minimal_conflict(auto, m) or tuple(auto)
        names = ", ".join(repr(c.name) for c in conflict)
        return Witness(
            None,
            None,
            tuple(c.name for c in conflict),
            f"no trace satisfies the spec: {names} conflict",
        )
    calls = realisable_calls(machine, spec)
    shortest = _search(machine, spec, calls, deadline, registry, match, nonempty=False)
    if shortest:
        return Witness(shortest, None, (), "a shortest trace satisfying every constraint")
    if shortest is not None:
        longer = _search(machine, spec, calls, deadline, registry, match, nonempty=True)
        return Witness(shortest, longer, (), "the empty trace satisfies every constraint")
    return Witness(
        None,
        None,
        (),
        f"no satisfying trace found within the search bound ({MAX_CANDIDATES} candidates); one "
        "may exist with argument values or quantified bindings lint does not invent",
    )


def _search(
    machine: Machine,
    spec: A.Spec,
    calls: Mapping[Letter, Record],
    deadline: float,
    registry: Registry | None,
    match: Matcher | None,
    *,
    nonempty: bool,
) -> list[Record] | None:
    """The first abstract path whose concrete calls verify against the whole spec."""
    paths = accepting_paths(machine, JOINT_BUDGET, list(calls), deadline, nonempty=nonempty)
    for tried, path in enumerate(paths):
        if path is None or tried >= MAX_CANDIDATES:
            return None
        records = [calls[letter] for letter in path.letters]
        if verify_trace(records, spec, registry=registry, match=match).passed:
            return records
    return None


def _try(
    spec: A.Spec,
    candidates: list[list[Record]],
    registry: Registry | None,
    match: Matcher | None,
    why: str,
) -> Witness:
    for records in candidates:
        if verify_trace(records, spec, registry=registry, match=match).passed:
            return Witness(records, None, (), "a shortest trace satisfying every constraint")
    return Witness(None, None, (), f"no witness found: {why}")


def _other_tool(spec: A.Spec, machine: Machine) -> str:
    """A tool name the formulas never mention, for the "any other tool" letter."""
    unused = [d.name for d in spec.tools if d.name not in machine.names]
    return unused[0] if unused else "other_tool"


_EXHAUSTED = object()


def realisable_calls(machine: Machine, spec: A.Spec) -> dict[Letter, Record]:
    """One concrete call per letter that a concrete call really is, in search order.

    Each letter is turned into a call whose arguments make its tests true (declared
    arguments filled in first, then with the tests' values only); the call's *actual*
    letter, as the monitor would read it, is what it realises. Searching over these only
    keeps contradictory letters (``i = 1`` and ``i = 2`` on one call) out of witnesses.
    """
    filler = _other_tool(spec, machine)
    out: dict[Letter, Record] = {}
    for letter in ordered_letters(machine) or ():
        for fill in (True, False):
            record = _call(letter, machine, spec, filler, fill=fill)
            call = as_trace([record]).calls[0]
            for real in machine.letters_of(call, {}, pending=False):
                out.setdefault(real, record)
    return out


def _call(letter: Letter, machine: Machine, spec: A.Spec, filler: str, *, fill: bool) -> Record:
    cls, mask = letter
    name = cls if cls != OTHER else filler
    data = [
        a
        for a in machine.atoms
        if isinstance(a, EventAtom) and a.has_data and (a.tool is None or a.tool == cls)
    ]
    args: dict[str, Any] = {}
    result: dict[str, Any] = {}
    for bit, atom in enumerate(data):
        if not mask >> bit & 1:
            continue
        for t in atom.tests:
            value = _satisfying(t)
            if value is _NONE:
                continue
            path = t.field.path
            if len(path) > 1 and path[0] == "args":
                path = path[1:]
            if path and path[0] == "result":
                _set(result, ("value", *path[1:]), value)
            else:
                _set(args, path, value)
        if atom.result is not None and isinstance(atom.result, A.Literal):
            result["value"] = atom.result.value
    decl = spec.tool(name)
    if fill and decl is not None:
        for p in decl.params:
            if p.name not in args and not p.optional:
                args[p.name] = _DEFAULTS.get(p.type, "x")
    record: Record = {"tool_name": name, "arguments": args}
    if "value" in result:
        record["tool_result"] = result["value"]
    return record


_NONE = object()
_DEFAULTS: Mapping[str, Any] = {
    "str": "x",
    "number": 1,
    "int": 1,
    "bool": True,
    "list": [],
    "dict": {},
}


def _set(target: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    if not path or not all(isinstance(k, str) for k in path):
        return
    node = target
    for k in path[:-1]:
        nxt = node.get(str(k))
        if not isinstance(nxt, dict):
            nxt = {}
            node[str(k)] = nxt
        node = nxt
    node[str(path[-1])] = value


def _satisfying(t: A.Test) -> Any:
    """A value that passes the test (``_NONE`` when lint cannot invent one)."""
    v = t.value
    op = t.op
    if isinstance(v, A.Regex):
        return (
            _matching_text(v)
            if op == "~"
            else ("" if not compile_regex(v.pattern, v.flags).search("") else _NONE)
        )
    if not isinstance(v, (A.Literal, A.ListLiteral)):
        return _NONE
    value: Any = (
        v.value
        if isinstance(v, A.Literal)
        else [x.value for x in v.items if isinstance(x, A.Literal)]
    )
    if op == "=":
        return value
    if op == "!=":
        return _other(value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if op in (">=", "<="):
        return value
    if op == ">":
        return value + 1 if number else (value + "a" if isinstance(value, str) else _NONE)
    if op == "<":
        return value - 1 if number else ("" if isinstance(value, str) and value else _NONE)
    if op == "contains":
        return [value]
    if op == "in":
        if isinstance(value, (list, tuple)):
            return value[0] if value else _NONE
        return value if isinstance(value, str) else _NONE
    return _NONE


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "_other"
    return "x"


def _matching_text(r: A.Regex) -> Any:
    """The pattern's literal characters, if they match it (simple patterns only)."""
    compiled = compile_regex(r.pattern, r.flags)
    text = "".join(ch for ch in r.pattern.replace("\\.", ".") if ch not in "^$\\()[]{}*+?|")
    for candidate in (text, r.pattern, "x"):
        if compiled.search(candidate):
            return candidate
    return _NONE
