"""A machine state as plain JSON, and back: residual and register contents as DNFs over a
node table, never process-local ids, so another process (with its own interning order)
rebuilds the identical state. A document that does not fit the machine raises
``ValueError`` (the monitor turns it into ``MonitorStateError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.monitor.formula import FALSE, TRUE, Op
from agentguard.monitor.stepping import Automaton


def save_cstate(self: Automaton, cstate: int) -> dict[str, Any]:
    """The state as plain JSON: residual and register contents as DNFs over a node table."""
    residual, regs = self.cstates[cstate]
    nodes: dict[int, Any] = {}

    def cubes(r: int) -> list[list[int]]:
        return [[_save_node(self, e, nodes) for e in sorted(c)] for c in self.store.residuals[r]]

    return {
        "cubes": cubes(residual),
        "regs": [cubes(r) for r in regs],
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


def restore_cstate(self: Automaton, doc: Mapping[str, Any]) -> int:
    raw = {int(k): v for k, v in doc["nodes"].items()}
    built: dict[int, int] = {}
    s = self.store

    def build(k: int) -> int:
        if k in built:
            return built[k]
        n = raw[k]
        op = n[0]
        if op == Op.TRUE:
            out = TRUE
        elif op == Op.FALSE:
            out = FALSE
        elif op == Op.LITERAL:
            if not 0 <= int(n[1]) < len(self.atoms):
                raise ValueError("state refers to an atom this spec does not have")
            out = s.lit(int(n[1]), bool(n[2]))
        elif op in (Op.AND, Op.OR):
            out = s.mk((op, tuple(sorted(build(c) for c in n[1]))))
        elif op in (Op.NEXT, Op.WEAK_NEXT):
            out = s.mk((op, build(n[1])))
        elif op in (Op.UNTIL, Op.RELEASE):
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
