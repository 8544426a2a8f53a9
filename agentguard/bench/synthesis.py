"""Layered constraint synthesis (AgentLTL Appendix A.4): gold trace -> L1-L6 `.ltl` spec.

Every constraint is satisfied by the gold trace it was built from, so the gold trace
scores exactly 1.0 on its own spec; every call whose argument the procedure determines
is checked, and order is checked where the procedure fixes it. The layers:

- L1 (2.0) routing: the first and last tools are called; a branch alternative that
  the gold trace never takes is forbidden with ``BranchCalled(taken, forbidden)``.
- L2 (1.5) prompt-derived arguments, per call: ``CalledWith`` over the arguments whose
  values the prompt states (seed, ``j``, loop indices), one constraint per formula.
- L3 (4.0) global sequence: ``InOrder`` of the whole gold tool sequence.
- L4 (3.0) per-call order: each call follows the calls the procedure puts directly
  before it (``GoldCall.after``), with full arguments: ``F(A & X B)`` in a chain,
  ``F(A & X F B)`` into and out of a fan-out over a set (whose items are free), plus
  the safety half ``!B W A`` so an out-of-order call is blocked when proposed.
- L5 (3.0) counts: ``CalledN(t, n, =)`` per template tool (``n = 0`` forbids it).
- L6 (1.0) exact arguments, per call: ``CalledWith`` with the call's full argument
  mapping (computed intermediates included); the k-th identical call needs k.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentguard.bench.instance import GoldCall
from agentguard.bench.tools import TOOL_INFOS

LAYER_WEIGHTS: Mapping[str, float] = {
    "L1": 2.0,
    "L2": 1.5,
    "L3": 4.0,
    "L4": 3.0,
    "L5": 3.0,
    "L6": 1.0,
}
"""Table 5's per-layer weights."""

LAYER_NAMES: Mapping[str, str] = {
    "L1": "Branch",
    "L2": "Argument extraction",
    "L3": "Global sequence",
    "L4": "Pair-order",
    "L5": "Call-count",
    "L6": "Exact args",
}


@dataclass(frozen=True, slots=True)
class LayeredConstraint:
    """One synthesized constraint: a name, its layer and weight, and AgentLTL formula text."""

    name: str
    layer: str
    weight: float
    formula: str
    message: str


def ltl_value(value: Any) -> str:
    """An AgentLTL literal for a JSON value (ints, lists, strings, bools)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(ltl_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return ltl_mapping(value)
    return json.dumps(value)


def ltl_mapping(args: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {ltl_value(v)}" for k, v in args.items()) + "}"


def _first_use_order(names: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(names))


def predecessors(gold: Sequence[GoldCall], i: int) -> tuple[int, ...]:
    """The positions of the calls the procedure puts directly before call ``i``."""
    after = gold[i].after
    return (i - 1,) if after is None and i > 0 else (after or ())


def event(call: GoldCall) -> str:
    """The event atom matching this call's tool and exact arguments."""
    tests = ", ".join(f"{k} = {ltl_value(v)}" for k, v in call.args.items())
    return f"{call.name}({tests})"


def show_call(call: GoldCall) -> str:
    return f"{call.name}({', '.join(f'{k}={ltl_value(v)}' for k, v in call.args.items())})"


def _pair_at_least(first: str, then: str, k: int) -> str:
    """``first`` immediately followed by ``then``, at least ``k`` times (overlaps allowed)."""
    formula = f"F({first} & X {then})"
    for _ in range(k - 1):
        formula = f"F({first} & X ({then} & {formula}))"
    return formula


def _at_least(atom: str, k: int) -> str:
    """``atom`` occurs at least ``k`` times: ``F(a & X F(a & ... X F a))``."""
    formula = f"F {atom}"
    for _ in range(k - 1):
        formula = f"F({atom} & X {formula})"
    return formula


def synthesize(
    gold: Sequence[GoldCall],
    *,
    tools: Sequence[str],
    alternatives: Sequence[tuple[str, str]] = (),
    weights: Mapping[str, float] = LAYER_WEIGHTS,
) -> list[LayeredConstraint]:
    """The six layers for one gold trace; ``tools`` is the template's tool set."""
    names = [c.name for c in gold]
    used = _first_use_order(names)
    out: list[LayeredConstraint] = []

    def add(name: str, layer: str, formula: str, message: str) -> None:
        if any(c.name == name for c in out):
            return
        out.append(LayeredConstraint(name, layer, weights[layer], formula, message))

    # L1: routing
    for t in _first_use_order([names[0], names[-1]] if names else []):
        add(f"{t}_called", "L1", f"Called({t})", f"Call {t} as the procedure requires.")
    for a, b in alternatives:
        for taken, forbidden in ((a, b), (b, a)):
            if taken in used and forbidden not in used:
                add(
                    f"{taken}_not_{forbidden}",
                    "L1",
                    f"BranchCalled({taken}, {forbidden})",
                    f"This task routes to {taken}; {forbidden} is the wrong branch here.",
                )
            elif taken in used and forbidden in used:
                add(
                    f"{taken}_called",
                    "L1",
                    f"Called({taken})",
                    f"Some items route to {taken}; call it for them.",
                )
    # L2: prompt-derived arguments, per call (one constraint per distinct formula)
    for i, call in enumerate(gold):
        if call.prompt_args:
            formula = f"CalledWith({call.name}, {ltl_mapping(call.prompt_args)})"
            if not any(c.formula == formula and c.layer == "L2" for c in out):
                add(
                    f"call_{i + 1}_prompt_args",
                    "L2",
                    formula,
                    f"Call {call.name} with the arguments the task states: "
                    f"{ltl_mapping(call.prompt_args)}.",
                )
    # L3: global sequence
    if names:
        add(
            "global_sequence",
            "L3",
            f"InOrder([{', '.join(names)}])",
            "Make the calls in the order the procedure prescribes.",
        )
    # L4: each call follows the calls the procedure puts directly before it. An
    # immediate pair that the gold trace repeats (identical items of a fan-out) must
    # occur as often as it does there.
    pairs: dict[tuple[str, str], int] = {}
    first_at: dict[str, int] = {}
    for i, call in enumerate(gold):
        first_at.setdefault(event(call), i)
    for i, call in enumerate(gold):
        for p in predecessors(gold, i):
            before = gold[p]
            adjacent = p == i - 1 and before.block == call.block
            first, then = event(before), event(call)
            if adjacent:
                k = pairs[(first, then)] = pairs.get((first, then), 0) + 1
                formula = _pair_at_least(first, then, k)
            else:
                formula = f"F({first} & X F {then})"
            if first_at[then] > first_at[first]:
                # the safety half: ``then`` never runs before ``first`` has, so the
                # firewall can block an out-of-order call when it is proposed
                formula = f"(!{then} W {first}) & {formula}"
            add(
                f"call_{p + 1}_then_call_{i + 1}",
                "L4",
                formula,
                f"{show_call(call)} comes {'right ' if adjacent else ''}after {show_call(before)}.",
            )
    # L5: counts, including forbidden tools of the template
    for t in _first_use_order([*used, *tools]):
        count = names.count(t)
        msg = f"Call {t} exactly {count} time(s)." if count else f"Do not call {t} in this task."
        add(f"{t}_count", "L5", f"CalledN({t}, {count}, =)", msg)
    # L6: exact arguments of every call (the k-th identical call needs k occurrences)
    occurrences: dict[str, int] = {}
    for i, call in enumerate(gold):
        atom = event(call)
        k = occurrences[atom] = occurrences.get(atom, 0) + 1
        add(
            f"call_{i + 1}_exact_args",
            "L6",
            f"CalledWith({call.name}, {ltl_mapping(call.args)})" if k == 1 else _at_least(atom, k),
            f"Call {show_call(call)}" + (f" ({k} times in all)." if k > 1 else "."),
        )
    return out


def render_spec(
    name: str,
    constraints: Sequence[LayeredConstraint],
    tools: Sequence[str],
    *,
    severity: str | None = None,
    aliases: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The `.ltl` text of a synthesized spec; ``severity`` (e.g. ``SOFT_BLOCK(3)``) tags all.

    ``aliases`` (shown name -> base tool and argument renames) declares renamed tools
    with their shown argument names.
    """
    lines = [f"spec {name}", ""]
    for t in tools:
        alias = (aliases or {}).get(t)
        base = str(alias["tool"]) if alias else t
        shown = {v: k for k, v in (alias or {}).get("args", {}).items()}
        params = ", ".join(
            f"{shown.get(p.name, p.name)}: {'int' if p.type == 'integer' else 'list'}"
            for p in TOOL_INFOS[base].params
        )
        lines.append(f"tool {t}({params})")
    lines.append("")
    for c in constraints:
        head = f"constraint {c.name} layer {c.layer} weight {c.weight}"
        if severity:
            head += f" severity {severity}"
        lines.append(head)
        lines.append(f"    message {json.dumps(c.message)}")
        lines.append(f"  := {c.formula}")
    return "\n".join(lines) + "\n"


def layer_weight_shares(constraints: Sequence[LayeredConstraint]) -> dict[str, float]:
    """Each layer's share of the total weight (sums to 1)."""
    total = sum(c.weight for c in constraints) or 1.0
    return {
        layer: sum(c.weight for c in constraints if c.layer == layer) / total
        for layer in LAYER_WEIGHTS
    }
