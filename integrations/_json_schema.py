"""Tool declarations from JSON Schema: what an MCP server's ``tools/list`` or an OpenAI
Agents ``FunctionTool`` says about its arguments, as AgentLTL ``tool`` declarations, so
the firewall's schema checks (missing, unexpected, mistyped, out-of-bound arguments)
run on frameworks whose tools carry a JSON Schema instead of a spec's ``tool`` lines.

A declaration is closed: the properties a schema lists are the arguments a call may
pass (a schema allowing extra properties still gets its extras refused). Of a numeric
property's bounds one is kept (``minimum``, ``exclusiveMinimum``, ``maximum``,
``exclusiveMaximum``, first found), as a ``tool`` parameter holds one bound. A property
typed with a union, ``anyOf`` / ``oneOf``, or no ``type`` is ``any``. The spec's own
``tool`` lines win over a schema's declaration of the same tool (they may carry
``from`` sources and ``requires``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentguard.language import ast as A

_TYPES: Final = {
    "string": "str",
    "integer": "int",
    "number": "number",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}
_BOUNDS: Final = (
    ("minimum", ">="),
    ("exclusiveMinimum", ">"),
    ("maximum", "<="),
    ("exclusiveMaximum", "<"),
)


def declaration(name: str, schema: Mapping[str, Any] | None) -> A.ToolDecl:
    """The ``tool`` declaration of ``name`` whose arguments follow ``schema``."""
    if not isinstance(schema, Mapping):
        return A.ToolDecl(name)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return A.ToolDecl(name)
    raw_required = schema.get("required")
    required = set(raw_required) if isinstance(raw_required, list) else set()
    params = tuple(
        _param(str(key), prop, str(key) not in required) for key, prop in properties.items()
    )
    return A.ToolDecl(name, params)


def _param(name: str, prop: Any, optional: bool) -> A.Param:
    if not isinstance(prop, Mapping):
        return A.Param(name, "any", optional)
    kind = _TYPES.get(prop["type"], "any") if isinstance(prop.get("type"), str) else "any"
    bound = None
    if kind in ("int", "number"):
        for key, op in _BOUNDS:
            value = prop.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bound = (op, value)
                break
    return A.Param(name, kind, optional, None, bound)


def declarations(schemas: Iterable[tuple[str, Mapping[str, Any] | None]]) -> list[A.ToolDecl]:
    """One declaration per ``(tool name, input schema)``, in order."""
    return [declaration(name, schema) for name, schema in schemas]


def with_declarations(spec: A.Spec, found: Iterable[A.ToolDecl]) -> A.Spec:
    """``spec`` with ``found`` added to its tool declarations (the spec's own win)."""
    own = {t.name for t in spec.tools}
    extra = tuple(t for t in found if t.name not in own)
    if not extra:
        return spec
    merged: A.Spec = dataclasses.replace(spec, tools=(*spec.tools, *extra))
    return merged


__all__ = ["declaration", "declarations", "with_declarations"]
