"""DECLARE counts -> candidate constraints: formulas, layers and severities.

Each template is written as the AgentLTL formula whose verdict on a trace is the
template's (``tests/mining/test_temporal.py`` checks every one against ``verify_trace``).
Layers group what a reviewer reads together; severities follow what the monitor can do
with the constraint: a safety constraint (refuted by a prefix) may stop the call, a
liveness one (only an end can refute it) sends the final answer back (SOFT_BLOCK), as
``lint`` asks (docs/lint.md, ``never-blocks``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from agentguard.language.printer import name as q
from agentguard.mining.declare import Counts, Key
from agentguard.mining.model import Candidate, Evidence
from agentguard.severity import DEFAULT_SEVERITY, Severity, SeverityKind

MIN_AT_BOUND: Final = 0.1
"""The share of the traces calling a tool that must reach an ``at_most`` bound."""

SOFT: Final = DEFAULT_SEVERITY
WARN: Final = Severity(SeverityKind.BLOCK_AND_WARN)

_FORMULAS: Final[Mapping[str, Callable[[Key], str]]] = {
    "existence": lambda k: f"F {q(k[0])}",
    "absence": lambda k: f"G !{q(k[0])}",
    "init": lambda k: q(k[0]),
    "responded_existence": lambda k: f"F {q(k[0])} -> F {q(k[1])}",
    "response": lambda k: f"G({q(k[0])} -> F {q(k[1])})",
    "precedence": lambda k: f"G({q(k[1])} -> O {q(k[0])})",
    "chainresponse": lambda k: f"G({q(k[0])} -> X {q(k[1])})",
    "chainprecedence": lambda k: f"G({q(k[1])} -> Y {q(k[0])})",
    "altresponse": lambda k: f"G({q(k[0])} -> X(!{q(k[0])} U {q(k[1])}))",
    "altprecedence": lambda k: f"G({q(k[1])} -> Y(!{q(k[1])} S {q(k[0])}))",
    "not_succession": lambda k: f"G({q(k[0])} -> G !{q(k[1])})",
}

_NOTES: Final[Mapping[str, str]] = {
    "existence": "{0} is always called",
    "absence": "{0} is never called",
    "init": "the run starts with {0}",
    "responded_existence": "a run that calls {0} also calls {1}",
    "response": "every {0} is followed by {1}",
    "precedence": "{1} only after {0}",
    "chainresponse": "{1} comes right after every {0}",
    "chainprecedence": "{1} only right after {0}",
    "altresponse": "each {0} is answered by {1} before the next {0}",
    "altprecedence": "each {1} has its own {0} before it",
    "not_succession": "{1} never follows {0}",
}

LAYERS: Final[Mapping[str, str]] = {
    "existence": "L1_presence",
    "absence": "L1_presence",
    "at_most": "L1_presence",
    "init": "L2_order",
    "responded_existence": "L1_presence",
    "response": "L2_order",
    "precedence": "L2_order",
    "chainresponse": "L3_adjacency",
    "chainprecedence": "L3_adjacency",
    "altresponse": "L3_adjacency",
    "altprecedence": "L3_adjacency",
    "not_succession": "L2_order",
}
"""The suggested layer of each template: presence, order, adjacency (then data, schema)."""

_SAFETY: Final = frozenset(
    {"absence", "at_most", "precedence", "chainprecedence", "altprecedence", "not_succession"}
)


def severity_of(template: str) -> Severity:
    """BLOCK_AND_WARN for what a prefix refutes, SOFT_BLOCK (the default) otherwise."""
    return WARN if template in _SAFETY else SOFT


def formula(template: str, key: Key) -> str:
    return _FORMULAS[template](key)


def candidates(counts: Counts, traces: int) -> list[Candidate]:
    """Every counted (template, key) as a candidate, with its evidence."""
    out: list[Candidate] = []
    for (template, key), (activated, satisfied) in counts.items():
        out.append(
            Candidate(
                template,
                key,
                formula(template, key),
                Evidence(traces, activated, satisfied),
                LAYERS[template],
                severity_of(template),
                _NOTES[template].format(*key),
            )
        )
    return out


def at_most(
    per_trace: Sequence[Mapping[str, int]], activities: Sequence[str], min_support: float
) -> list[Candidate]:
    """``CalledN(a, n, <=)`` with the least ``n`` that holds on ``min_support`` of the traces.

    Activated where ``a`` is called (a trace without it satisfies any bound). A bound is
    proposed only when at least :data:`MIN_AT_BOUND` of those traces reach it: a count
    that one run in many reached is that run's extreme, not a limit of the procedure,
    and the next run exceeds it as often as not.
    """
    total = len(per_trace)
    out: list[Candidate] = []
    for a in activities:
        seen = sorted(c.get(a, 0) for c in per_trace)
        need = max(0, math.ceil(min_support * total - 1e-9) - 1)  # the ceil(s*N)-th smallest
        bound = seen[min(need, total - 1)] if total else 0
        if bound == 0:
            continue  # an absence, which the absence template states
        activated = sum(1 for n in seen if n > 0)
        satisfied = sum(1 for n in seen if 0 < n <= bound)
        if sum(1 for n in seen if n == bound) < MIN_AT_BOUND * activated:
            continue
        out.append(
            Candidate(
                "at_most",
                (a, str(bound)),
                f"CalledN({q(a)}, {bound}, <=)",
                Evidence(total, activated, satisfied),
                LAYERS["at_most"],
                severity_of("at_most"),
                f"{a} is called at most {bound} time(s)",
            )
        )
    return out
