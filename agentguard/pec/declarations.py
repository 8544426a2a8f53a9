"""Loaders of tool declarations for the oracle's schema, dependency and precondition stages.

The model is the language's own (:class:`agentguard.language.ast.ToolDecl`), checked by the
one checker of :mod:`agentguard.tools`; this module only builds declarations, from three
sources:

* ``.ltl`` tool declarations (:func:`declarations_from_spec`, reads ``Spec.tools``),
* JSON Schema documents: OpenAI/BFCL function definitions or ``{tool: schema}``
  (:func:`declarations_from_json_schema`), each schema read by the one rule of
  :mod:`agentguard.tools.json_schema` (shared with the MCP and OpenAI Agents adapters),
* a plain ``{tool: [param, ...]}`` or ``{tool: {param: type}}`` mapping
  (:func:`declarations_from_params`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentguard.language.ast import Param, Spec, ToolDecl
from agentguard.pec.errors import PecError
from agentguard.tools.json_schema import TYPE_ALIASES, declaration_from_json_schema

ToolDecls = Mapping[str, ToolDecl]
"""The declarations an oracle checks calls against, by tool name."""


# --------------------------------------------------------------- from .ltl specs
def declarations_from_spec(spec: Spec) -> dict[str, ToolDecl]:
    """Every ``tool`` declared in a spec (``Spec.tools``), by name."""
    return {decl.name: decl for decl in spec.tools}


# -------------------------------------------------------------- from JSON Schema
def declarations_from_json_schema(doc: Any) -> dict[str, ToolDecl]:
    """Declarations from function definitions (the documents :func:`tool_schemas` reads)."""
    return {name: _from_object_schema(name, schema) for name, schema in tool_schemas(doc).items()}


def tool_schemas(doc: Any) -> dict[str, Any]:
    """Each tool's JSON Schema of its arguments, by name, from function definitions: the
    one reader of ``pec --tools`` and ``lint --tools`` (whose schemas are compared with a
    spec's declarations as an agent's tools are).

    Accepts a list of ``{"name", "parameters"}`` (BFCL, OpenAI functions), of
    ``{"type": "function", "function": {...}}`` (OpenAI tools), ``{"tools": [...]}``,
    or ``{tool_name: <JSON Schema of its arguments>}``.
    """
    if isinstance(doc, Mapping) and "tools" in doc:
        doc = doc["tools"]
    if isinstance(doc, Mapping):
        return {str(name): schema for name, schema in doc.items()}
    if not isinstance(doc, list):
        raise PecError("a tool schema document must be a list of functions or an object")
    out: dict[str, Any] = {}
    for item in doc:
        fn = item.get("function", item) if isinstance(item, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise PecError(f"function definition without a name: {item!r:.80}")
        out[fn["name"]] = fn.get("parameters", {})
    return out


def _from_object_schema(name: str, schema: Any) -> ToolDecl:
    if not isinstance(schema, Mapping):
        raise PecError(f"tool {name!r}: parameters must be a JSON Schema object")
    return declaration_from_json_schema(name, schema)


# ---------------------------------------------------------------- from a mapping
def declarations_from_params(
    tools: Mapping[str, Iterable[str] | Mapping[str, str]],
) -> dict[str, ToolDecl]:
    """From ``{tool: ["a", "b?"]}`` (``?`` = optional, any type) or ``{tool: {"a": "int"}}``.

    A type name must be one of :data:`TYPE_ALIASES` (else
    :class:`PecError`)."""
    out: dict[str, ToolDecl] = {}
    for tool, params in tools.items():
        entries = params.items() if isinstance(params, Mapping) else ((p, "any") for p in params)
        built = []
        for raw_name, type_name in entries:
            name = raw_name.rstrip("?")
            canonical = TYPE_ALIASES.get(type_name)
            if canonical is None:
                raise PecError(f"parameter {name!r}: unknown type {type_name!r}")
            built.append(Param(name, canonical, optional=raw_name.endswith("?")))
        out[tool] = ToolDecl(tool, tuple(built))
    return out


__all__ = [
    "TYPE_ALIASES",
    "ToolDecls",
    "declarations_from_json_schema",
    "declarations_from_params",
    "declarations_from_spec",
]
