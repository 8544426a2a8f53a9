"""Loaders of tool declarations for the oracle's schema, dependency and precondition stages.

The model is the language's own (:class:`agentguard.language.ast.ToolDecl`), checked by the
one checker of :mod:`agentguard.tools`; this module only builds declarations, from three
sources:

* ``.ltl`` tool declarations (:func:`declarations_from_spec`, reads ``Spec.tools``),
* JSON Schema documents: OpenAI/BFCL function definitions or ``{tool: schema}``
  (:func:`declarations_from_json_schema`); ``enum``, array ``items`` and
  ``additionalProperties`` become the declaration's ``enum``, ``items`` and
  ``allow_extra``, numeric bounds (``minimum``...) are not kept,
* a plain ``{tool: [param, ...]}`` or ``{tool: {param: type}}`` mapping
  (:func:`declarations_from_params`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from agentguard.language.ast import PARAM_TYPE_ALIASES, Param, Spec, ToolDecl
from agentguard.pec.errors import PecError

TYPE_ALIASES: Final = {**PARAM_TYPE_ALIASES, "tuple": "list"}
"""Type names a tool definition may use: AgentLTL's and JSON Schema's, and BFCL's
``tuple`` (a JSON array)."""

ToolDecls = Mapping[str, ToolDecl]
"""The declarations an oracle checks calls against, by tool name."""


# --------------------------------------------------------------- from .ltl specs
def declarations_from_spec(spec: Spec) -> dict[str, ToolDecl]:
    """Every ``tool`` declared in a spec (``Spec.tools``), by name."""
    return {decl.name: decl for decl in spec.tools}


# -------------------------------------------------------------- from JSON Schema
def declarations_from_json_schema(doc: Any) -> dict[str, ToolDecl]:
    """Declarations from function definitions.

    Accepts a list of ``{"name", "parameters"}`` (BFCL, OpenAI functions), of
    ``{"type": "function", "function": {...}}`` (OpenAI tools), ``{"tools": [...]}``,
    or ``{tool_name: <JSON Schema of its arguments>}``.
    """
    if isinstance(doc, Mapping) and "tools" in doc:
        doc = doc["tools"]
    if isinstance(doc, Mapping):
        return {str(name): _from_object_schema(str(name), schema) for name, schema in doc.items()}
    if not isinstance(doc, list):
        raise PecError("a tool schema document must be a list of functions or an object")
    out: dict[str, ToolDecl] = {}
    for item in doc:
        fn = item.get("function", item) if isinstance(item, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise PecError(f"function definition without a name: {item!r:.80}")
        out[fn["name"]] = _from_object_schema(fn["name"], fn.get("parameters", {}))
    return out


def _from_object_schema(name: str, schema: Any) -> ToolDecl:
    if not isinstance(schema, Mapping):
        raise PecError(f"tool {name!r}: parameters must be a JSON Schema object")
    props = schema.get("properties", {}) or {}
    required = set(schema.get("required", ()) or ())
    params = []
    for pname, pschema in props.items():
        pschema = pschema if isinstance(pschema, Mapping) else {}
        items = pschema.get("items")
        item_type = _json_type(items.get("type")) if isinstance(items, Mapping) else None
        enum = pschema.get("enum")
        params.append(
            Param(
                str(pname),
                _json_type(pschema.get("type")),
                optional=pname not in required,
                enum=tuple(enum) if isinstance(enum, list) else None,
                items=None if item_type == "any" else item_type,
            )
        )
    extra = schema.get("additionalProperties", False) is not False
    return ToolDecl(name, tuple(params), allow_extra=extra)


def _json_type(raw: Any) -> str:
    if isinstance(raw, list):  # ["string", "null"]: take the first non-null type
        raw = next((t for t in raw if t != "null"), "any")
    return TYPE_ALIASES.get(str(raw).lower(), "any") if raw is not None else "any"


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
