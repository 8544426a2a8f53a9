"""DECLARE over argument values: ``tool_b(j = 1)`` as an activity of its own.

A loop or a staged procedure calls one tool over and over; its tool name says nothing
about where in the procedure a call is, but a recurring argument value does (the first
page, the second attempt, step ``j = 0`` then ``j = 1``). The miner refines a tool into
one activity per such value and mines the order templates over them: ``tool_a(i = 2)``
only right after ``tool_a(i = 1)`` (chain precedence), ``tool_b(j = 0)`` always directly
followed by ``tool_b(j = 1)`` (chain response), and their eventual forms. A skipped,
repeated or swapped step then breaks an order every run kept.

A value is an activity when it recurs across runs (:data:`MIN_SHARE`) and its argument
takes few values at all (:data:`MAX_VALUES`): identifiers and computed numbers (an order
id, a node, a sum) vary per run, and the few of them that recur by chance would only
propose what some runs happened to do. Two
activities are related only when no call can be both (different tools, or one argument's
different values), so each formula means what its DECLARE template means and the pruning
rules stay theorems.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import numpy as np

from agentguard.language.printer import literal
from agentguard.language.printer import name as q
from agentguard.mining.fields import argument
from agentguard.mining.model import Candidate, Evidence
from agentguard.mining.temporal import LAYERS, severity_of
from agentguard.semantics.values import values_equal
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import DIALOGUE_NAMES, Trace

MIN_SHARE: Final = 0.1
"""A value is an activity when at least this share of the runs pass it (and two runs)."""

MAX_VALUES: Final = 10
"""An argument that takes more distinct values than this over the runs is data (an id, a
computed number), not a step: it is not refined."""

TEMPLATES: Final = ("chainprecedence", "chainresponse", "precedence", "response")
"""The order templates mined over refined activities (the chain forms catch a skipped or
swapped step; the eventual ones what a chain does not state)."""

_NOTES: Final = {
    "response": "every {0} is followed by {1}",
    "precedence": "{1} only after {0}",
    "chainresponse": "{1} comes right after every {0}",
    "chainprecedence": "{1} only right after {0}",
}

Activity = tuple[str, str | None, Any]  # (tool, argument, value); argument None: any call


def _value(value: Any) -> bool:
    """A value a step is named by: text, an integer or a boolean (no float, no null)."""
    return isinstance(value, (str, int, bool))


def activities(traces: Sequence[Trace]) -> list[Activity]:
    """The tools called and every recurring value of an argument with few of them, unless
    the argument always repeats an earlier result (a value computed by a tool is data,
    whatever it happened to be)."""
    runs: dict[tuple[str, str], dict[Any, set[int]]] = defaultdict(dict)
    tools: set[str] = set()
    other: set[tuple[str, str]] = set()
    fresh: set[tuple[str, str]] = set()  # passed a value no earlier result held
    for t, trace in enumerate(traces):
        results: set[Any] = set()
        for call in trace:
            if not call.is_tool or call.name in DIALOGUE_NAMES or call.name == FINAL_TOOL:
                continue
            tools.add(call.name)
            for key, value in call.args.items():
                slot = (call.name, str(key))
                if _value(value):
                    kind = (type(value) is bool, value)
                    runs[slot].setdefault(kind, set()).add(t)
                    if kind not in results:
                        fresh.add(slot)
                else:
                    other.add(slot)  # a float, a list, null: not a step's name
            results.update(_leaves(call.result) if call.has_result else ())
    need = max(2, math.ceil(MIN_SHARE * len(traces)))
    out: list[Activity] = [(tool, None, None) for tool in sorted(tools)]
    for (tool, key), values in sorted(runs.items()):
        recurring = sorted((v for v, ts in values.items() if len(ts) >= need), key=repr)
        if (
            (tool, key) in fresh
            and (tool, key) not in other
            and len(values) <= MAX_VALUES
            and len(recurring) >= 2
        ):
            out += [
                (tool, key, value)
                for _, value in recurring
                if atom((tool, key, value)) not in tools
            ]
    return out


def _leaves(value: Any) -> Iterator[tuple[bool, Any]]:
    """Every step-like value inside a result (as :func:`activities` keys them)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if _value(v):
            yield (type(v) is bool, v)
        elif isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def refines(label: str, tool: str) -> bool:
    """Whether an activity label names some calls of ``tool`` (``tool(k = v)``): what
    holds for every call of ``tool`` holds for those."""
    return label.startswith(q(tool) + "(")


def _matches(call: Any, a: Activity) -> bool:
    tool, key, value = a
    if call.name != tool:
        return False
    if key is None:
        return True
    return key in call.args and values_equal(call.args[key], value)


def atom(a: Activity) -> str:
    """The activity's event atom: ``tool`` or ``tool(k = value)``."""
    tool, key, value = a
    return q(tool) if key is None else f"{q(tool)}({argument(key)} = {literal(value)})"


def label(a: Activity) -> str:
    """The name a key uses: the tool's own name (as the DECLARE keys), or the atom."""
    return a[0] if a[1] is None else atom(a)


def _disjoint(a: Activity, b: Activity) -> bool:
    """No call is both: other tools, or one argument's different values."""
    return a[0] != b[0] or (a[1] is not None and a[1] == b[1] and a[2] != b[2])


def _grid(trace: Trace, acts: Sequence[Activity]) -> np.ndarray[Any, Any]:
    """(positions, activities): which activity each position of the trace is; dialogue
    positions are none (they keep their place, as the spec sees them)."""
    out = np.zeros((len(trace), len(acts)), bool)
    for i, call in enumerate(trace):
        if call.is_tool:
            for j, a in enumerate(acts):
                out[i, j] = _matches(call, a)
    return out


def _verdicts(m: np.ndarray[Any, Any]) -> dict[str, tuple[Any, Any]]:
    """Per template, (activated, satisfied) grids [a, b] of one trace."""
    count = m.sum(axis=0)
    present = count > 0
    n = len(m)
    idx = np.arange(n)[:, None]
    first = np.where(m, idx, n).min(axis=0)
    last = np.where(m, idx, -1).max(axis=0)
    adj = m[:-1].T.astype(np.int64) @ m[1:].astype(np.int64)  # [a, b]: a directly before b
    pa, pb = present[:, None], present[None, :]
    both = pa & pb
    return {
        "chainresponse": (pa, pa & (adj == count[:, None])),
        "chainprecedence": (pb, pb & (adj == count[None, :])),
        "response": (pa, both & (last[:, None] < last[None, :])),
        "precedence": (pb, both & (first[:, None] < first[None, :])),
    }


def candidates(traces: Sequence[Trace]) -> list[Candidate]:
    """Every template over two disjoint activities, one of them a value, with its evidence."""
    acts = activities(traces)
    if all(a[1] is None for a in acts):
        return []
    k = len(acts)
    act = {t: np.zeros((k, k), np.int64) for t in TEMPLATES}
    sat = {t: np.zeros((k, k), np.int64) for t in TEMPLATES}
    for trace in traces:
        if not len(trace):
            continue
        for template, (a, s) in _verdicts(_grid(trace, acts)).items():
            act[template] += np.broadcast_to(a, (k, k))
            sat[template] += s
    out = []
    for template in TEMPLATES:
        for i, j in zip(*np.nonzero(act[template]), strict=True):
            a, b = acts[i], acts[j]
            if (a[1] is None and b[1] is None) or not _disjoint(a, b):
                continue
            key = (label(a), label(b))
            out.append(
                Candidate(
                    template,
                    key,
                    _formula(template, atom(a), atom(b)),
                    Evidence(len(traces), int(act[template][i, j]), int(sat[template][i, j])),
                    LAYERS[template],
                    severity_of(template),
                    _NOTES[template].format(*key),
                )
            )
    return out


def _formula(template: str, a: str, b: str) -> str:
    return {
        "response": f"G({a} -> F {b})",
        "precedence": f"G({b} -> O {a})",
        "chainresponse": f"G({a} -> X {b})",
        "chainprecedence": f"G({b} -> Y {a})",
    }[template]
