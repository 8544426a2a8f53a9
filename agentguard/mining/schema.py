"""The tool vocabulary the traces used: each tool's arguments, types, enums and ranges.

This is the least-privilege half of a mined spec: a tool no trace called is not declared
(so a spec that declares tools refuses it), an argument no call passed is not declared,
an argument every call passed is required, and the values seen bound what may be passed
(an enumeration for text that recurs over few values, a range for numbers).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agentguard.language.printer import literal
from agentguard.language.printer import name as q
from agentguard.mining.fields import argument
from agentguard.mining.model import ArgumentSchema, Candidate, Evidence, ToolSchema
from agentguard.severity import Severity, SeverityKind
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Trace

MAX_ENUM: Final = 8
"""Text arguments with at most this many distinct values, each seen at least twice on
average, are proposed as an enumeration; more varied text (identifiers, queries) is not."""

SCHEMA_LAYER: Final = "L5_schema"
SCHEMA_SEVERITY: Final = Severity(SeverityKind.BLOCK_AND_WARN)


def type_of(value: Any) -> str:
    """The AgentLTL parameter type of a JSON value (``any`` for null)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return "any"


def _join(types: set[str]) -> str:
    if types <= {"int", "number"}:
        return "int" if types == {"int"} else "number"
    return types.pop() if len(types) == 1 else "any"


@dataclass
class _Seen:
    """What one argument of one tool was passed, while reading."""

    types: set[str] = field(default_factory=set)
    calls: int = 0
    traces: set[int] = field(default_factory=set)
    values: dict[Any, Any] = field(default_factory=dict)  # first 2*MAX_ENUM distinct
    low: float = math.inf
    high: float = -math.inf
    unbounded: bool = False  # a NaN or an infinity was passed: no range holds


def _arguments(seen: dict[str, _Seen], calls: int) -> tuple[ArgumentSchema, ...]:
    out = []
    for name in sorted(seen):
        s = seen[name]
        kind = _join(set(s.types))
        enum = None
        if kind == "str" and len(s.values) <= MAX_ENUM and s.calls >= 2 * len(s.values):
            enum = tuple(sorted(s.values.values()))
        low = high = None
        if (
            kind in ("int", "number")
            and not s.unbounded
            and math.isfinite(s.low)
            and math.isfinite(s.high)
        ):
            low, high = s.low, s.high
        out.append(ArgumentSchema(name, kind, s.calls < calls, enum, low, high))
    return tuple(out)


def tool_schemas(traces: Sequence[Trace]) -> tuple[ToolSchema, ...]:
    """Every tool called (``final_answer`` aside: it is always allowed), sorted by name."""
    tools: dict[str, tuple[list[int], dict[str, _Seen]]] = {}
    for t, trace in enumerate(traces):
        for call in trace:
            if not call.is_tool or call.name == FINAL_TOOL:
                continue
            count, args = tools.setdefault(call.name, ([0], {}))
            count[0] += 1
            for key, value in call.args.items():
                s = args.setdefault(str(key), _Seen())
                s.types.add(type_of(value))
                s.calls += 1
                s.traces.add(t)
                if isinstance(value, str) and len(s.values) <= 2 * MAX_ENUM:
                    s.values.setdefault(value, value)
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    if math.isfinite(value):
                        s.low, s.high = min(s.low, value), max(s.high, value)
                    else:
                        s.unbounded = True
    return tuple(
        ToolSchema(name, _arguments(args, count[0]), count[0])
        for name, (count, args) in sorted(tools.items())
    )


def declaration(tool: ToolSchema) -> str:
    """``tool name(arg: type, opt?: type)``: the arguments seen, typed."""
    params = ", ".join(f"{q(a.name)}{'?' if a.optional else ''}: {a.type}" for a in tool.arguments)
    return f"tool {q(tool.name)}({params})"


def _number(x: float) -> str:
    return literal(int(x)) if float(x).is_integer() and abs(x) < 2**53 else literal(float(x))


def value_candidates(
    tools: Iterable[ToolSchema], traces: int, used: dict[tuple[str, str], int]
) -> list[Candidate]:
    """An enumeration or a range per argument that has one; ``used`` counts, per (tool,
    argument), the traces that pass it (the candidate's activations; it holds on all)."""
    out: list[Candidate] = []
    for tool in tools:
        for a in tool.arguments:
            field_text = argument(a.name)
            guard = f"{q(tool.name)}({field_text} != null)" if a.optional else q(tool.name)
            evidence = Evidence(traces, used[(tool.name, a.name)], used[(tool.name, a.name)])
            if a.enum is not None:
                values = ", ".join(literal(v) for v in a.enum)
                out.append(
                    Candidate(
                        "enum",
                        (tool.name, a.name),
                        f"G({guard} -> {q(tool.name)}({field_text} in [{values}]))",
                        evidence,
                        SCHEMA_LAYER,
                        SCHEMA_SEVERITY,
                        f"{tool.name}.{a.name} took only these values",
                    )
                )
            if a.low is not None and a.high is not None:
                lo, hi = _number(a.low), _number(a.high)
                out.append(
                    Candidate(
                        "range",
                        (tool.name, a.name),
                        f"G({guard} -> {q(tool.name)}({field_text} >= {lo}, {field_text} <= {hi}))",
                        evidence,
                        SCHEMA_LAYER,
                        SCHEMA_SEVERITY,
                        f"{tool.name}.{a.name} stayed within [{lo}, {hi}]",
                    )
                )
    return out


def argument_traces(
    tools: Iterable[ToolSchema], traces: Sequence[Trace]
) -> dict[tuple[str, str], int]:
    """Per (tool, argument): how many traces pass it at least once."""
    out: dict[tuple[str, str], int] = {(t.name, a.name): 0 for t in tools for a in t.arguments}
    for trace in traces:
        seen = {(c.name, str(k)) for c in trace if c.is_tool for k in c.args}
        for key in seen:
            if key in out:
                out[key] += 1
    return out
