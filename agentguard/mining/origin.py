"""Arguments the user stated: every value of ``T.k`` appeared in an earlier user message.

:mod:`agentguard.mining.dataflow` traces text to the user's messages with a substring
test; numbers (an amount, a count, a seed the task states) need the language's own
provenance test, ``T(k from user)``, which reads a message's number tokens and is decided
before the call runs (docs/language.md, *Provenance*). A value the agent took from
elsewhere (a wrong count, an injected amount) is then refused when it is proposed. The
values are matched with the evaluator's own rule (:func:`~agentguard.semantics.appearance.appears`),
so what is counted is what ``verify_trace`` decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentguard.language.printer import name as q
from agentguard.mining.dataflow import DATA_LAYER, DATA_SEVERITY
from agentguard.mining.fields import argument
from agentguard.mining.model import Candidate, Evidence
from agentguard.semantics.appearance import Seen, appears
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import USER_MESSAGE, Trace

Target = tuple[str, str]


def _numeric(value: Any) -> bool:
    """A number, or a non-empty list of numbers: what the text provenance cannot trace."""
    if isinstance(value, list):
        return bool(value) and all(_numeric(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _trace_origins(trace: Trace) -> dict[Target, bool]:
    """Per numeric argument used in the trace: did every value appear in a user message
    before its call?"""
    seen = Seen()
    out: dict[Target, bool] = {}
    for call in trace:
        if call.name == USER_MESSAGE:
            text = call.args.get("text")
            if isinstance(text, str):
                seen.add_text(text)
            continue
        if not call.is_tool or call.name == FINAL_TOOL:
            continue
        for key, value in call.args.items():
            target = (call.name, str(key))
            if not _numeric(value):
                out[target] = False  # another type: the template is about numbers
                continue
            out[target] = out.get(target, True) and appears(value, [seen])
    return out


def formula(target: Target) -> str:
    """``G !T(k not from user)``: false on a call without ``k`` (the ⊥ rule), so an
    optional argument needs no guard."""
    tool, key = target
    return f"G !{q(tool)}({argument(key)} not from user)"


def candidates(traces: Sequence[Trace]) -> list[Candidate]:
    """Every numeric argument whose values came from the user's messages in some trace."""
    activated: dict[Target, int] = {}
    satisfied: dict[Target, int] = {}
    for trace in traces:
        for target, held in _trace_origins(trace).items():
            activated[target] = activated.get(target, 0) + 1
            satisfied[target] = satisfied.get(target, 0) + held
    out = []
    for target, sat in sorted(satisfied.items()):
        if sat == 0:
            continue
        tool, key = target
        out.append(
            Candidate(
                "from_user",
                target,
                formula(target),
                Evidence(len(traces), activated[target], sat),
                DATA_LAYER,
                DATA_SEVERITY,
                f"{tool}.{key} is always a number the user wrote earlier",
            )
        )
    return out
