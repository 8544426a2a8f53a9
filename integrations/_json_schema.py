"""Tool declarations from JSON Schema for the adapters: an MCP server's ``tools/list`` or an
OpenAI Agents ``FunctionTool`` says what its arguments are, so the firewall's schema
checks (missing, unexpected, mistyped, out-of-bound arguments) run on frameworks whose
tools carry a JSON Schema instead of a spec's ``tool`` lines. A schema is read by the one
rule of :mod:`agentguard.tools.json_schema` (the PEC oracle's too); the spec's own
``tool`` lines win over a schema's declaration of the same tool (they may carry ``from``
sources and ``requires``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from agentguard.language import ast as A
from agentguard.tools.json_schema import declaration_from_json_schema

declaration = declaration_from_json_schema
"""The ``tool`` declaration of a name whose arguments follow a JSON Schema."""


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
