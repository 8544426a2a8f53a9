"""Repair hints: what calls would satisfy a constraint the proposal (or ending) violates.

A hint is a short route through the constraint's automaton from its current state to a
state where the proposed call (or the end) is allowed, spelled with the automaton's
letters (``call verify_identity before calling issue_refund``).
"""

from __future__ import annotations

from agentguard.errors import AgentGuardError
from agentguard.monitor.budget import hint as budget_hint
from agentguard.monitor.machine import Letter, Machine
from agentguard.monitor.nodes import AutomatonNode, BoolNode, Node
from agentguard.monitor.quantified import QuantNode
from agentguard.monitor.verdict import Verdict
from agentguard.trace.model import Call


def hint(
    node: Node, proposed: Call | None, position: int, uncounted: frozenset[str], ending: bool
) -> str:
    """What would satisfy ``node``: calls to make before ``proposed`` (at ``position``), or
    before ending; empty when the monitor cannot tell."""
    if isinstance(node, BoolNode):
        # a conjunction is repaired by repairing the part that fails (others: none)
        if node.op != "and":
            return ""
        batch = [proposed.at(position)] if proposed is not None else []
        for child in node.children:
            verdict, final = child.peek(batch, ending, [])
            if (verdict is Verdict.VIOLATED or (ending and final is False)) and (
                found := hint(child, proposed, position, uncounted, ending)
            ):
                return found
        return ""
    if isinstance(node, QuantNode) and proposed is not None:
        return node.hint(proposed.at(position), ending=ending)
    if not isinstance(node, AutomatonNode) or node.error:
        return ""
    if node.budget:
        count = node.count + (1 if proposed is not None and proposed.name not in uncounted else 0)
        found = budget_hint(node.budget, count, ending=ending)
        if found:
            return found
    m: Machine = node.machine
    try:
        then = m.letters_of(proposed.at(position), {}, pending=True) if proposed is not None else []
    except AgentGuardError:  # the call cannot be evaluated (peek reported why): no route
        return ""
    if not ending and not then:
        return ""
    if ending and not then:
        route = repair_end(m, node.state)
    else:
        route = m.repair(node.state, then, ending=ending)
    if not route:
        return ""
    steps = " then ".join(m.describe(letter) for letter in route)
    what = "finishing" if ending else (f"calling {proposed.name}" if proposed is not None else "")
    return f"call {steps} before {what}".strip()


def repair_end(m: Machine, state: int) -> list[Letter] | None:
    """Shortest letters after which ending the run would satisfy the machine."""
    letters = m.all_letters()
    if letters is None or m.accepts(state):
        return None
    seen = {state}
    frontier: list[tuple[int, list[Letter]]] = [(state, [])]
    for _ in range(3):
        nxt = []
        for node, path in frontier:
            for letter in letters:
                succ = m.step(node, letter)
                if succ in seen:
                    continue
                seen.add(succ)
                if m.accepts(succ):
                    return [*path, letter]
                nxt.append((succ, [*path, letter]))
        frontier = nxt
    return None


__all__ = ["hint"]
