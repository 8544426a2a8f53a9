"""The text a decision sends back to the model: what was violated, how to repair it,
what is pending."""

from __future__ import annotations

from collections.abc import Sequence

from agentguard.enforcement.decision import Action, Violation
from agentguard.severity import SeverityKind
from agentguard.trace.refusal import BLOCKED_HEAD, STOPPED_HEAD

_HEAD = {  # a refusal's first line is the marker the transcript readers know it by
    Action.BLOCK: BLOCKED_HEAD,
    Action.STOP: STOPPED_HEAD,
    Action.OVERRIDE: "Executed as a deliberate override of the warning below.",
    Action.ALLOW: "Executed; the violations below were logged.",
}


def compose(
    action: Action,
    violations: Sequence[Violation],
    pending: Sequence[str],
    *,
    escalated: bool = False,
    note: str = "",
) -> str:
    """A message listing every violated constraint with its message and repair hint."""
    if action is Action.ALLOW and not violations and not note:
        return ""
    lines = [_HEAD[action]]
    if escalated:
        lines.append(
            "A SOFT_BLOCK constraint reached its limit of blocked attempts and became a stop."
        )
    for v in violations:
        text = (v.message or f"constraint {v.constraint} would be violated").rstrip()
        if text[-1:] not in ".!?":
            text += "."
        line = f"- [{v.severity}] {v.constraint}: {text} ({v.detail})"
        if v.hint:
            line += f" To satisfy it: {v.hint}."
        lines.append(line)
    kinds = {v.severity.kind for v in violations}
    overridable = kinds <= {SeverityKind.BLOCK_AND_WARN, SeverityKind.TOLERATE}
    if action is Action.BLOCK and SeverityKind.BLOCK_AND_WARN in kinds and overridable:
        lines.append("If you are sure, repeat exactly the same call to override this warning.")
    if note:
        lines.append(note)
    if pending and action is not Action.ALLOW:
        lines.append(
            "Still pending (must be satisfied before the run ends): " + ", ".join(pending) + "."
        )
    return "\n".join(lines)
