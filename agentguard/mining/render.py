"""A mined spec as readable, commented AgentLTL text that parses back.

Each constraint carries its evidence in a comment (support, confidence, the share of
traces it holds on, and with negative traces how many it rejects), so a reviewer sees
why it was proposed before deciding to keep it; constraints are grouped by layer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentguard.language.printer import name as q
from agentguard.mining.model import Candidate, ToolSchema
from agentguard.mining.schema import declaration
from agentguard.mining.temporal import LAYERS

_SAFE = re.compile(r"[^A-Za-z0-9_]+")


def constraint_name(c: Candidate, taken: set[str]) -> str:
    """``template_tool_tool``, made an identifier and unique."""
    parts: list[str] = [c.template]
    for k in c.key:
        if isinstance(k, tuple):
            parts.extend(
                str(x) for x in k if isinstance(x, str) and x not in ("", "*", "eq", "in", "args")
            )
        else:
            parts.append(str(k))
    base = _SAFE.sub("_", "_".join(parts)).strip("_")[:80] or "mined"
    out, i = base, 2
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    taken.add(out)
    return out


def _evidence(c: Candidate, negatives: int) -> str:
    e = c.evidence
    text = (
        f"support {e.support:.2f} ({e.activated}/{e.traces} traces activate it), "
        f"confidence {e.confidence:.2f} ({e.satisfied}/{e.activated}), holds on {e.holds:.0%}"
    )
    if negatives:
        text += f"; rejects {c.rejects}/{negatives} negative run(s)"
    return text


def _tool_comment(t: ToolSchema) -> str:
    return f"# {t.name}: {t.calls} call(s) seen"


def _layer_order(layer: str) -> tuple[int, str]:
    order = sorted(set(LAYERS.values()))
    return (order.index(layer), layer) if layer in order else (len(order), layer)


def render(
    name: str,
    tools: Sequence[ToolSchema],
    constraints: Sequence[Candidate],
    *,
    traces: int,
    min_support: float,
    negatives: int = 0,
) -> tuple[str, list[str]]:
    """The spec text, and the constraint names in the order of ``constraints``."""
    lines = [
        f"# Mined by `agentguard mine` from {traces} trace(s); every constraint holds on at",
        f"# least {min_support:.0%} of them. Review before enforcing: keep what the procedure",
        "# means, delete what the runs only happened to do.",
    ]
    if negatives:
        lines.append(f"# Kept: only what rejects at least one of {negatives} negative run(s).")
    lines += [f"spec {q(name)}", ""]
    for t in tools:
        lines += [_tool_comment(t), declaration(t)]
    taken: set[str] = set()
    names = [constraint_name(c, taken) for c in constraints]
    by_layer = sorted(
        range(len(constraints)), key=lambda i: (_layer_order(constraints[i].layer), i)
    )
    current = None
    for i in by_layer:
        c = constraints[i]
        if c.layer != current:
            current = c.layer
            lines += ["", f"# ---- {current} " + "-" * max(0, 70 - len(current))]
        lines += [
            "",
            f"# {c.template}: {c.note}",
            f"# {_evidence(c, negatives)}",
            f"constraint {names[i]}",
            f"    layer {c.layer}  severity {c.severity}",
            f"  := {c.formula}",
        ]
    return "\n".join(lines) + "\n", names
