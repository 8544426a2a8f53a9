"""The twelve production templates of AgentLTL Table 7, in table order."""

from __future__ import annotations

from collections.abc import Mapping

from agentguard.bench.errors import UnknownTemplateError
from agentguard.bench.templates._base import Recorder, Template, derived_j, render_prompt
from agentguard.bench.templates.composite import (
    DYNAMIC_EXPANSION,
    FAN_OUT_LOOP,
    FORALL_EXISTS_COMBINED,
    LOOP_EXPANSION,
    NESTED_LOOPS_BRANCHING,
)
from agentguard.bench.templates.fanout import EXISTS_SELECTION, FAN_OUT_FAN_IN, FORALL_PROCESSING
from agentguard.bench.templates.nested import NESTED_LOOPS, TOOL_CONDITION_BRANCHING
from agentguard.bench.templates.sequential import BRANCH_SELECTION, LOOP_TERMINATION

TEMPLATES: Mapping[str, Template] = {
    t.name: t
    for t in (
        LOOP_TERMINATION,
        BRANCH_SELECTION,
        FAN_OUT_FAN_IN,
        FORALL_PROCESSING,
        EXISTS_SELECTION,
        NESTED_LOOPS,
        TOOL_CONDITION_BRANCHING,
        DYNAMIC_EXPANSION,
        FORALL_EXISTS_COMBINED,
        NESTED_LOOPS_BRANCHING,
        FAN_OUT_LOOP,
        LOOP_EXPANSION,
    )
}
TEMPLATE_NAMES: tuple[str, ...] = tuple(TEMPLATES)


def get_template(name: str) -> Template:
    """The template called ``name`` (``_plus_`` is accepted for ``+``)."""
    key = name.replace("_plus_", "+")
    if key not in TEMPLATES:
        raise UnknownTemplateError(
            f"unknown template {name!r}; choose from: {', '.join(TEMPLATE_NAMES)}"
        )
    return TEMPLATES[key]


__all__ = [
    "TEMPLATES",
    "TEMPLATE_NAMES",
    "Recorder",
    "Template",
    "derived_j",
    "get_template",
    "render_prompt",
]
