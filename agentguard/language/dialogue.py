"""Which traces a spec judges with their dialogue events, and which without.

Loaders keep user and assistant messages as positions of the trace
(:data:`~agentguard.trace.model.USER_MESSAGE`, ...). A spec written before they existed
says ``X`` and ``N`` about *tool calls*: on a chat trace with messages kept, "the next
position" would become the assistant's reply and the spec would silently change
meaning. So the rule, used alike by ``verify_trace``, ``holds``, the firewall and the
monitor's users: a spec (or formula) that names a dialogue event anywhere is judged on
the whole trace; any other spec on its tool calls only (:meth:`Trace.without_messages`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from agentguard.errors import TraceError
from agentguard.language import ast as A
from agentguard.language.walk import subformulas
from agentguard.trace.model import DIALOGUE_NAMES, DROPPED_MESSAGES, Trace


def mentions_dialogue(formulas: Iterable[A.Formula]) -> bool:
    """Whether an event atom, a trace predicate or a domain names a dialogue event."""
    for formula in formulas:
        for node in subformulas(formula):
            if isinstance(node, A.Event) and (
                node.tool in DIALOGUE_NAMES or any(_source_names_dialogue(t) for t in node.tests)
            ):
                return True
            if isinstance(node, A.TracePredicate) and _names_dialogue(node.args):
                return True
            if (
                isinstance(node, A.Quantified)
                and isinstance(node.domain, A.Domain)
                and node.domain.tool in DIALOGUE_NAMES
            ):
                return True
    return False


def _source_names_dialogue(test: A.Test) -> bool:
    """A ``from`` test whose source reads user messages (``user``, ``trusted``) or whose
    pattern names a dialogue event: the trace must keep its messages for it."""
    if not isinstance(test.value, A.Source):
        return False
    for part in test.value.parts:
        if part.kind in ("user", "trusted"):
            return True
        if part.pattern is not None and (
            part.pattern.tool in DIALOGUE_NAMES
            or any(_source_names_dialogue(t) for t in part.pattern.tests)
        ):
            return True
    return False


def _names_dialogue(args: Iterable[Any]) -> bool:
    for arg in args:
        if isinstance(arg, str) and arg in DIALOGUE_NAMES:
            return True
        if isinstance(arg, tuple) and _names_dialogue(arg):
            return True
    return False


def spec_formulas(spec: A.Spec | Iterable[A.Constraint]) -> list[A.Formula]:
    """Every formula a spec judges with: its constraints and its tools' ``requires``."""
    if isinstance(spec, A.Spec):
        out = [c.formula for c in spec.constraints]
        out.extend(t.requires for t in spec.tools if t.requires is not None)
        return out
    return [c.formula for c in spec]


_SPECS_LOCK = threading.Lock()
_SPECS_SEEN: dict[int, tuple[A.Spec, bool]] = {}
"""The answer per Spec object (a frozen tree): the firewall asks at every dialogue event,
and a walk of the whole spec costs more than the event. Keyed by identity and holding
the spec, so an id is never reused while cached; a few specs at most, oldest dropped."""


def spec_mentions_dialogue(spec: A.Spec | Iterable[A.Constraint]) -> bool:
    """Whether the spec is judged on dialogue events too (see the module docstring)."""
    if not isinstance(spec, A.Spec):
        return mentions_dialogue(spec_formulas(spec))
    seen = _SPECS_SEEN.get(id(spec))
    if seen is not None and seen[0] is spec:
        return seen[1]
    answer = mentions_dialogue(spec_formulas(spec))
    with _SPECS_LOCK:
        if len(_SPECS_SEEN) >= 16:
            del _SPECS_SEEN[next(iter(_SPECS_SEEN))]
        _SPECS_SEEN[id(spec)] = (spec, answer)
    return answer


def judged(trace: Trace, dialogue: bool) -> Trace:
    """``trace`` as a spec sees it: whole when it names dialogue events, else tools only.

    A spec that names dialogue events cannot judge a trace whose messages were dropped
    (loaded with the default ``messages=False``): that is an error, not a violation.
    """
    if not dialogue:
        return trace.without_messages()
    if trace.metrics.get(DROPPED_MESSAGES):
        raise TraceError(
            "this spec judges dialogue events (user_message / assistant_message), but the "
            f"trace was loaded without its {trace.metrics[DROPPED_MESSAGES]} messages: "
            "load it with messages=True"
        )
    return trace
