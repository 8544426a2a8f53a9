"""How an argument's values follow each other over a run's calls of one tool.

A loop or a fan-out passes each item once (``fetch(page = 1)``, then 2, 3): the miner
proposes, per argument, that no value repeats (``distinct``); a repeated value is then
the wrong or duplicated call it usually is. An order (each value greater than the ones
before) would need ``<`` against a quantified variable, which the monitor can only
check at the end of a run (``lint`` says ``late``), so it is not proposed. The comparisons are the evaluator's own (:func:`~agentguard.semantics.values.compare`),
over every value the formula's domain holds, so what is counted is what ``verify_trace``
decides.

The converse, ``same`` (no later value differs: the argument is fixed for the run, as an
account or a setting the task states once), catches the one call that passes another
value, which neither a range nor an enumeration over all runs can: each run has its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from agentguard.language.printer import name as q
from agentguard.mining.fields import argument, variable
from agentguard.mining.model import Candidate, Evidence
from agentguard.semantics.values import compare
from agentguard.severity import Severity, SeverityKind
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Trace

SEQUENCE_LAYER: Final = "L4_data"
SEQUENCE_SEVERITY: Final = Severity(SeverityKind.BLOCK_AND_WARN)

# template -> the operator no later value may stand in to an earlier one
_FORBIDDEN: Final = {"distinct": "=", "same": "!="}
_NOTES: Final = {
    "distinct": "no two calls of {0} pass the same {1}",
    "same": "every call of {0} in a run passes the same {1}",
}


def formula(template: str, tool: str, key: str) -> str:
    """``forall v: G(T(k = v) -> N G !T(k op v))``: no later call's value is ``op`` v."""
    v = variable({key})
    field = argument(key)
    op = _FORBIDDEN[template]
    return f"forall {v}: G({q(tool)}({field} = {v}) -> N G !{q(tool)}({field} {op} {v}))"


def _holds(values: Sequence[Any], op: str) -> bool:
    return not any(
        compare(later, op, earlier) for i, earlier in enumerate(values) for later in values[i + 1 :]
    )


def candidates(traces: Sequence[Trace]) -> list[Candidate]:
    """Per (tool, argument) passed more than once in some trace, each template's evidence."""
    activated: dict[tuple[str, str], int] = {}
    satisfied: dict[tuple[str, str, str], int] = {}
    repeated: set[tuple[str, str]] = set()
    for trace in traces:
        values: dict[tuple[str, str], list[Any]] = {}
        for call in trace:
            if not call.is_tool or call.name == FINAL_TOOL:
                continue
            for key, value in call.args.items():
                if not isinstance(value, list):  # a list only adds elements it never equals
                    values.setdefault((call.name, str(key)), []).append(value)
        for target, seen in values.items():
            activated[target] = activated.get(target, 0) + 1
            if len(seen) > 1:
                repeated.add(target)
            for template, op in _FORBIDDEN.items():
                if _holds(seen, op):
                    slot = (template, *target)
                    satisfied[slot] = satisfied.get(slot, 0) + 1
    out = []
    for (template, tool, key), sat in sorted(satisfied.items()):
        if (tool, key) not in repeated:
            continue  # one call per run: nothing to say about an order
        out.append(
            Candidate(
                template,
                (tool, key),
                formula(template, tool, key),
                Evidence(len(traces), activated[(tool, key)], sat),
                SEQUENCE_LAYER,
                SEQUENCE_SEVERITY,
                _NOTES[template].format(tool, key),
            )
        )
    return out
