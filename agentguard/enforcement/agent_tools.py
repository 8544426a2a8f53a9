"""The spec's tools against the tools an agent really has (names and JSON schemas).

A spec that names ``get_user_detail`` while the agent has ``get_user_details`` never
fires: every constraint on the misspelled tool is vacuous. When the agent's tools are
known (the framework adapters pass them, or ``Firewall(..., agent_tools=...)``), the
firewall compares them with the spec once, warns with :class:`ToolMismatchWarning`
(``-W error`` makes it fatal) and logs each difference. ``agentguard lint`` reports the
same differences statically (``agentguard.analysis``).
"""

from __future__ import annotations

import difflib
import functools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentguard._identity_cache import IdentityCache
from agentguard.errors import ToolMismatchWarning
from agentguard.language import ast as A
from agentguard.language.walk import subformulas
from agentguard.trace.call_fields import DIALOGUE_NAMES

IMPLICIT_TOOLS = frozenset({"final_answer"})
"""Tools a spec may name without declaring them (the firewall's final tool)."""

AgentTools = Mapping[str, Mapping[str, Any] | None]
"""An agent's tools: name -> JSON Schema of the arguments, or None when not exposed."""

MismatchKind = Literal["missing-tool", "unknown-parameter", "undeclared-parameter", "type-mismatch"]

_JSON_TYPES: Mapping[str, frozenset[str]] = {
    "str": frozenset({"string"}),
    "number": frozenset({"number", "integer"}),
    "int": frozenset({"integer"}),
    "bool": frozenset({"boolean"}),
    "list": frozenset({"array"}),
    "dict": frozenset({"object"}),
}


@dataclass(frozen=True, slots=True)
class ToolMismatch:
    """One difference between the spec and the agent's tools.

    ``missing-tool``: the spec names a tool the agent lacks (``suggestion``: its closest
    agent tool); ``unknown-parameter``: a declared parameter the agent's schema lacks;
    ``undeclared-parameter``: a required schema parameter the declaration lacks (every
    call passing it breaks the declaration); ``type-mismatch``: declared vs schema type.
    """

    kind: MismatchKind
    tool: str
    message: str
    parameter: str | None = None
    suggestion: str | None = None

    def __str__(self) -> str:
        return self.message


def spec_tool_names(spec: A.Spec) -> list[str]:
    """Tools the spec declares or names in a formula, in order of appearance (walked
    once per spec: every run's firewall compares them with the agent's tools)."""
    return list(_names_of.get(id(spec), spec, None, lambda: tuple(_spec_tool_names(spec))))


_names_of: IdentityCache[tuple[str, ...]] = IdentityCache(64)


def _spec_tool_names(spec: A.Spec) -> list[str]:
    names = [d.name for d in spec.tools]
    for c in spec.constraints:
        for n in subformulas(c.formula):
            if isinstance(n, A.Event) and n.tool is not None:
                names.append(n.tool)
            elif isinstance(n, A.TracePredicate):
                names.extend(_tool_args(n))
    return list(dict.fromkeys(names))


@functools.lru_cache(maxsize=1024)
def _close(name: str, choices: tuple[str, ...]) -> list[str]:
    """The choice closest to ``name``, if close enough (difflib's ratio, the costly part
    of a comparison: a run's firewall asks again what the last run's asked)."""
    return difflib.get_close_matches(name, choices, n=1, cutoff=0.6)


def _tool_args(p: A.TracePredicate) -> list[str]:
    kinds = A.TRACE_PREDICATES.get(p.name, "").split()
    out: list[str] = []
    for kind, arg in zip(kinds, p.args, strict=False):
        if kind == "t" and isinstance(arg, str):
            out.append(arg)
        elif kind == "[t]" and isinstance(arg, (tuple, list)):
            out.extend(a for a in arg if isinstance(a, str))
    return out


def compare_tools(
    spec: A.Spec,
    agent_tools: AgentTools,
    *,
    implicit: frozenset[str] = IMPLICIT_TOOLS,
    names: Sequence[str] | None = None,
) -> list[ToolMismatch]:
    """Differences between the spec's tools and the agent's (name -> JSON schema or None).

    A schema is the JSON Schema of the tool's arguments (``{"type": "object",
    "properties": {...}, "required": [...]}``), as smolagents, LangChain, MCP and the
    OpenAI function format give it; None when the framework does not expose one (names
    are then compared, parameters not). ``names`` is :func:`spec_tool_names` of the spec
    when the caller has it already (a firewall's prototype keeps it).
    """
    out: list[ToolMismatch] = []
    for name in spec_tool_names(spec) if names is None else names:
        if name in agent_tools or name in implicit or name in DIALOGUE_NAMES:
            continue  # (user_message / assistant_message: the conversation, no agent tool)
        close = _close(name, tuple(agent_tools))
        have = (
            f"the agent has {close[0]!r}"
            if close
            else (
                "the agent has " + (", ".join(repr(t) for t in sorted(agent_tools)) or "no tools")
            )
        )
        out.append(
            ToolMismatch(
                "missing-tool",
                name,
                f"spec names tool {name!r}, which the agent does not have; {have}",
                suggestion=close[0] if close else None,
            )
        )
    for decl in spec.tools:
        schema = agent_tools.get(decl.name)
        if not isinstance(schema, Mapping):
            continue
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        declared = {p.name for p in decl.params}
        for p in decl.params:
            if p.name not in props:
                close = _close(p.name, tuple(props))
                hint = f"; the agent's tool has {close[0]!r}" if close else ""
                out.append(
                    ToolMismatch(
                        "unknown-parameter",
                        decl.name,
                        f"{decl.name}: the spec declares parameter {p.name!r}, which the "
                        f"agent's tool does not take{hint}",
                        p.name,
                        close[0] if close else None,
                    )
                )
                continue
            json_types = _schema_types(props[p.name])
            allowed = _JSON_TYPES.get(p.type)
            if allowed is not None and json_types and not (json_types & allowed):
                out.append(
                    ToolMismatch(
                        "type-mismatch",
                        decl.name,
                        f"{decl.name}: parameter {p.name!r} is declared {p.type} but the "
                        f"agent's schema says {'/'.join(sorted(json_types))}",
                        p.name,
                    )
                )
        for r in required:
            if r not in declared:
                out.append(
                    ToolMismatch(
                        "undeclared-parameter",
                        decl.name,
                        f"{decl.name}: the agent's tool requires {r!r}, which the spec's "
                        "declaration lacks, so every call breaks the declaration",
                        r,
                    )
                )
    return out


def _schema_types(prop: Any) -> frozenset[str]:
    """The JSON types a property schema allows (empty: unknown or any)."""
    if not isinstance(prop, Mapping):
        return frozenset()
    t = prop.get("type")
    if isinstance(t, str):
        return frozenset({t}) - {"null"} or frozenset()
    if isinstance(t, list):
        return frozenset(x for x in t if isinstance(x, str) and x != "null")
    for key in ("anyOf", "oneOf"):
        options = prop.get(key)
        if isinstance(options, list):
            found: set[str] = set()
            for o in options:
                sub = _schema_types(o)
                if not sub:
                    if isinstance(o, Mapping) and o.get("type") == "null":
                        continue
                    return frozenset()
                found |= sub
            return frozenset(found)
    return frozenset()


def warn_tool_mismatches(
    spec: A.Spec,
    agent_tools: AgentTools,
    *,
    implicit: frozenset[str] = IMPLICIT_TOOLS,
    names: Sequence[str] | None = None,
) -> tuple[ToolMismatch, ...]:
    """:func:`compare_tools`, each difference also issued as a :class:`ToolMismatchWarning`.

    Python's warnings (not only a log line) so that ``-W error::ToolMismatchWarning`` or
    ``pytest -W error`` makes a misspelled tool fatal in a user's test suite.
    """
    found = tuple(compare_tools(spec, agent_tools, implicit=implicit, names=names))
    for mismatch in found:
        warnings.warn(ToolMismatchWarning(mismatch.message), stacklevel=3)
    return found
