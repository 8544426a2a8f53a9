"""The spec's tools against the tools an agent really has (names and JSON schemas).

A spec that names ``get_user_detail`` while the agent has ``get_user_details`` never
fires: every constraint on the misspelled tool is vacuous. When the agent's tools are
known (the framework adapters pass them, or ``Firewall(..., agent_tools=...)``), the
spec is compared with them and each difference is warned of with
:class:`ToolMismatchWarning` (``-W error`` makes it fatal) and logged in every run's
decision log; with ``strict_tools=True`` a difference raises :class:`ToolMismatchError`
instead. The adapters that see the agent's tools when it is guarded compare there
(:func:`check_at_guard`), so a misspelt tool is reported at ``guard()``, not when a run
starts. ``agentguard lint --tools FILE`` reports the same differences statically
(``agentguard.analysis``).
"""

from __future__ import annotations

import difflib
import functools
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentguard._identity_cache import IdentityCache
from agentguard.errors import AgentGuardError, ToolMismatchWarning
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


class ToolMismatchError(AgentGuardError, ValueError):
    """The spec does not fit the agent's tools (a tool the agent lacks, a parameter or
    type its schema contradicts) and ``strict_tools=True`` makes that an error: raised
    by ``guard()`` (smolagents, OpenAI Agents), the MCP gateway at startup, a
    ``Firewall`` given ``agent_tools``, or when an adapter reports tools it learned
    later (the LangChain middleware, at its first model call). ``mismatches`` holds
    every difference found, each with the closest agent tool where there is one."""

    def __init__(self, mismatches: Sequence[ToolMismatch]) -> None:
        self.mismatches = tuple(mismatches)
        super().__init__(str(self))

    def __str__(self) -> str:
        n = len(self.mismatches)
        head = (
            f"the spec does not fit the agent's tools ({n} difference{'s' if n != 1 else ''}; "
            "strict_tools=True makes each an error):"
        )
        return head + "".join(f"\n  {m}" for m in self.mismatches)


@dataclass(frozen=True, eq=False)
class ReportedTools(Mapping[str, "Mapping[str, Any] | None"]):
    """An agent's tools whose differences with the spec were reported already, when the
    agent was guarded (:func:`check_at_guard`): each run's firewall still compares and
    logs them in its own decision log, but does not warn of them again."""

    tools: Mapping[str, Mapping[str, Any] | None]

    def __getitem__(self, name: str) -> Mapping[str, Any] | None:
        return self.tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)


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


def close_tool(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (difflib's ratio, at least 0.6), or None: the
    "did you mean" of every tool comparison."""
    found = _close(name, tuple(choices))
    return found[0] if found else None


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
    ``pytest -W error`` makes a misspelled tool fatal in a user's test suite. Tools given
    as :class:`ReportedTools` were warned of when the agent was guarded: not again.
    """
    found = tuple(compare_tools(spec, agent_tools, implicit=implicit, names=names))
    if not isinstance(agent_tools, ReportedTools):
        for mismatch in found:
            warnings.warn(ToolMismatchWarning(mismatch.message), stacklevel=3)
    return found


def check_at_guard(
    spec: A.Spec,
    agent_tools: AgentTools,
    *,
    strict: bool = False,
    final_tools: Iterable[str] = IMPLICIT_TOOLS,
) -> ReportedTools:
    """Compare the spec with the agent's tools when the agent is guarded: each difference
    a :class:`ToolMismatchWarning` pointing at the caller's ``guard()`` line, or with
    ``strict`` one :class:`ToolMismatchError` listing them all. Returns the tools marked
    :class:`ReportedTools`, for the adapter to hand its runs' firewalls (``agent_tools``):
    they log the differences in each run's log without warning twice."""
    found = compare_tools(spec, agent_tools, implicit=frozenset(final_tools))
    if found and strict:
        raise ToolMismatchError(found)
    for mismatch in found:
        warnings.warn(ToolMismatchWarning(mismatch.message), stacklevel=_callers_level())
    return agent_tools if isinstance(agent_tools, ReportedTools) else ReportedTools(agent_tools)


def _callers_level() -> int:
    """The ``stacklevel`` of the first frame outside agentguard (and its adapters), as
    seen from the ``warnings.warn`` call in the caller: the user's ``guard()`` line,
    however many of agentguard's frames lie between (``agentguard.guard`` dispatching
    to an adapter, or the adapter called directly)."""
    frame = sys._getframe(2)  # the caller of the function that calls this one
    level = 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("agentguard"):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
