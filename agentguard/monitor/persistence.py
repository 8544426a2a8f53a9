"""A machine state as plain JSON, and back: residual and register contents as DNFs over a
node table, never process-local ids, so another process (with its own interning order)
rebuilds the identical state. A document that does not fit the machine raises
``ValueError`` (the monitor turns it into ``MonitorStateError``).

A bounded past operator's register is saved as its window, ``{"window": [[age, cubes],
...]}`` (ages within its bound). A document saved when such operators were unrolled into
``Y`` registers has another number of registers, and is refused as not fitting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.monitor import windows as W
from agentguard.monitor.formula import FALSE, TRUE, Op
from agentguard.monitor.registers import Register
from agentguard.monitor.stepping import Automaton


def save_cstate(self: Automaton, cstate: int) -> dict[str, Any]:
    """The state as plain JSON: residual and register contents as DNFs over a node table."""
    residual, regs = self.cstates[cstate]
    nodes: dict[int, Any] = {}

    def cubes(r: int) -> list[list[int]]:
        return [[_save_node(self, e, nodes) for e in sorted(c)] for c in self.store.residuals[r]]

    def content(reg: Register, c: int) -> Any:
        if reg.windowed:
            return {"window": [[age, cubes(r)] for age, r in self.windows[c]]}
        return cubes(c)

    return {
        "cubes": cubes(residual),
        "regs": [content(reg, c) for reg, c in zip(self.registers, regs, strict=True)],
        "nodes": {str(k): v for k, v in nodes.items()},
    }


def _save_node(self: Automaton, i: int, out: dict[int, Any]) -> int:
    if i in out:
        return i
    n = self.store.nodes[i]
    op = n[0]
    if op in (Op.TRUE, Op.FALSE):
        out[i] = [op]
    elif op == Op.LITERAL:
        out[i] = [Op.LITERAL, n[1], n[2]]
    elif op in (Op.AND, Op.OR):
        out[i] = [op, [_save_node(self, c, out) for c in n[1]]]
    elif op in (Op.NEXT, Op.WEAK_NEXT):
        out[i] = [op, _save_node(self, n[1], out)]
    elif op in (Op.UNTIL, Op.RELEASE):
        out[i] = [op, _save_node(self, n[1], out), _save_node(self, n[2], out)]
    else:
        out[i] = [op, n[1], _save_node(self, n[2], out)]
    return i


def restore_cstate(self: Automaton, doc: Any) -> int:
    """The state of ``doc`` (from :func:`save_cstate`), checked field by field: every node
    has a known opcode and its arity, refers only to nodes of the document (no cycles),
    literals to this machine's atoms, bounds within the machine's own bounds. The shared
    store is only touched under the machine's lock."""
    doc = expect_mapping(doc, "machine state")
    raw_nodes = expect_mapping(doc.get("nodes"), "machine state nodes")
    raw: dict[int, list[Any]] = {}
    for k, v in raw_nodes.items():
        if not isinstance(k, str) or not k.isdigit():
            raise ValueError(f"machine state node id {k!r} is not a number")
        raw[int(k)] = expect_list(v, f"machine state node {k}")
    cubes = _cubes(doc.get("cubes"), raw)
    regs_doc = expect_list(doc.get("regs"), "machine state registers")
    if len(regs_doc) != len(self.registers):
        raise ValueError("state has a different number of past-time registers")
    reg_docs = [_content(reg, r, raw) for reg, r in zip(self.registers, regs_doc, strict=True)]
    with self.lock:
        s = self.store
        bound = max(
            (n[1] for n in s.nodes if n[0] in (Op.EVENTUALLY_WITHIN, Op.ALWAYS_WITHIN)),
            default=-1,
        )
        built: dict[int, int] = {}
        building: set[int] = set()

        def build(k: int) -> int:
            if k in built:
                return built[k]
            if k in building:
                raise ValueError("machine state nodes refer to each other in a cycle")
            building.add(k)
            n = raw[k]
            op = n[0] if n else None
            if op not in Op.ALL or len(n) != _ARITY[op]:
                raise ValueError(f"machine state node {k} has no known shape: {n!r}")
            if op == Op.TRUE:
                out = TRUE
            elif op == Op.FALSE:
                out = FALSE
            elif op == Op.LITERAL:
                atom = expect_int(n[1], "a literal's atom", hi=len(self.atoms) - 1)
                if not isinstance(n[2], bool):
                    raise ValueError("a literal's sign must be true or false")
                out = s.lit(atom, n[2])
            elif op in (Op.AND, Op.OR):
                items = expect_list(n[1], "a junction's operands")
                if len(items) < 2:
                    raise ValueError("a junction needs two operands or more")
                out = s.mk((op, tuple(sorted({build(_ref(c, raw)) for c in items}))))
            elif op in (Op.NEXT, Op.WEAK_NEXT):
                out = s.mk((op, build(_ref(n[1], raw))))
            elif op in (Op.UNTIL, Op.RELEASE):
                out = s.mk((op, build(_ref(n[1], raw)), build(_ref(n[2], raw))))
            else:
                k_bound = expect_int(n[1], "a bound", hi=max(bound, 0))
                out = s.mk((op, k_bound, build(_ref(n[2], raw))))
            building.discard(k)
            built[k] = out
            return out

        def residual(cs: list[list[int]]) -> int:
            return s.residual(frozenset(frozenset(build(e) for e in c) for c in cs))

        def content(reg: Register, doc: Any) -> int:
            if not reg.windowed:
                return residual(doc)
            entries = [(age, residual(cs)) for age, cs in doc]
            return self.windows.intern(W.normalise(reg, entries))

        regs = tuple(content(reg, d) for reg, d in zip(self.registers, reg_docs, strict=True))
        return self.intern(residual(cubes), regs)


_ARITY: Final = {
    Op.TRUE: 1,
    Op.FALSE: 1,
    Op.LITERAL: 3,
    Op.AND: 2,
    Op.OR: 2,
    Op.NEXT: 2,
    Op.WEAK_NEXT: 2,
    Op.UNTIL: 3,
    Op.RELEASE: 3,
    Op.EVENTUALLY_WITHIN: 3,
    Op.ALWAYS_WITHIN: 3,
}


def _ref(value: Any, raw: Mapping[int, Any]) -> int:
    k = expect_int(value, "a node reference")
    if k not in raw:
        raise ValueError(f"machine state refers to node {k}, which it does not define")
    return k


def _content(reg: Register, value: Any, raw: Mapping[int, Any]) -> Any:
    """A register's saved content, checked: cubes, or a window's ``[age, cubes]`` entries."""
    if not reg.windowed:
        return _cubes(value, raw)
    doc = expect_mapping(value, "a bounded operator's window")
    entries = expect_list(doc.get("window"), "a window's entries")
    out = []
    for e in entries:
        pair = expect_list(e, "a window entry")
        if len(pair) != 2:
            raise ValueError("a window entry must be [age, cubes]")
        out.append(
            (expect_int(pair[0], "a window entry's age", hi=reg.bound), _cubes(pair[1], raw))
        )
    return out


def _cubes(value: Any, raw: Mapping[int, Any]) -> list[list[int]]:
    cubes = expect_list(value, "a residual")
    return [[_ref(e, raw) for e in expect_list(c, "a residual's cube")] for c in cubes]


# ---------------------------------------------------------------------- field checks
def expect_mapping(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else ``ValueError`` naming the field."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object, got {type(value).__name__}")
    return value


def expect_list(value: Any, what: str) -> list[Any]:
    """``value`` if it is a list (or tuple), else ``ValueError`` naming the field."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what} must be a list, got {type(value).__name__}")
    return list(value)


def expect_int(value: Any, what: str, *, lo: int = 0, hi: int | None = None) -> int:
    """``value`` if it is an integer in ``[lo, hi]`` (not a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {value!r:.40}")
    if value < lo or (hi is not None and value > hi):
        raise ValueError(f"{what} is out of range: {value}")
    return value


def expect_bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be true or false, got {value!r:.40}")
    return value


def expect_str(value: Any, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    return value
