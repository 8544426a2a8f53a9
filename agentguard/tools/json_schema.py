"""Tool declarations from JSON Schema: the one reading of a tool's argument schema.

Three places meet tools described by JSON Schema instead of a spec's ``tool`` lines: the
PEC oracle (BFCL and OpenAI function definitions, tau2 domains), the MCP gateway
(``tools/list``) and the OpenAI Agents adapter (``FunctionTool.params_json_schema``).
They all read a schema into the language's :class:`~agentguard.language.ast.ToolDecl`
here, so the firewall, offline scoring and the oracle check the same arguments the same
way (:mod:`agentguard.tools.checker`). The rules:

* the properties a schema lists are the arguments; ``required`` ones are not optional;
  no ``properties`` (or no schema) declares a tool that takes no arguments;
* ``additionalProperties`` absent or ``false`` closes the declaration (an argument not
  listed is refused); ``true`` or a schema allows extra arguments;
* ``type`` maps to an AgentLTL type (JSON Schema's names, AgentLTL's and BFCL's
  ``tuple``); a union (``anyOf``/``oneOf``, or a ``type`` list of several types or with
  ``null``) or no ``type`` is ``any``, so no valid value is ever refused;
* text whose ``contentMediaType`` is ``application/json`` (pydantic's ``Json``) is
  ``any``: the tool reads it decoded, and that is the value judged;
* ``enum`` becomes the parameter's ``enum``; an array's ``items`` type its ``items``;
* a numeric property's bounds (``minimum``, ``exclusiveMinimum``, ``maximum``,
  ``exclusiveMaximum``) are all kept: the first found is the parameter's ``bound`` (as
  a spec writes one), the others its ``limits``; so are a string's ``minLength`` and
  ``maxLength`` and an array's ``minItems`` and ``maxItems`` (``limits``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.language.ast import PARAM_TYPE_ALIASES, Param, ToolDecl

TYPE_ALIASES: Final = {**PARAM_TYPE_ALIASES, "tuple": "list"}
"""Type names a tool definition may use: AgentLTL's and JSON Schema's, and BFCL's
``tuple`` (a JSON array)."""

_BOUNDS: Final = (
    ("minimum", ">="),
    ("exclusiveMinimum", ">"),
    ("maximum", "<="),
    ("exclusiveMaximum", "<"),
)

JSON_MEDIA_TYPE: Final = "application/json"
"""The ``contentMediaType`` of text that holds JSON (pydantic's ``Json`` fields): the tool
reads it decoded, and the adapters judge it decoded, so it is declared ``any``."""

LENGTH_LIMITS: Final = ("minLength", "maxLength", "minItems", "maxItems")
"""The JSON Schema keywords bounding a string's length or an array's size."""


def declaration_from_json_schema(name: str, schema: Mapping[str, Any] | None) -> ToolDecl:
    """The ``tool`` declaration of ``name`` whose arguments follow ``schema``."""
    if not isinstance(schema, Mapping):
        return ToolDecl(name)
    properties = schema.get("properties")
    raw_required = schema.get("required")
    required = {str(r) for r in raw_required} if isinstance(raw_required, list) else set()
    params = (
        tuple(_param(str(key), prop, str(key) not in required) for key, prop in properties.items())
        if isinstance(properties, Mapping)
        else ()
    )
    extra = schema.get("additionalProperties", False)
    return ToolDecl(name, params, allow_extra=extra is not False and extra is not None)


def json_type(raw: Any) -> str:
    """The AgentLTL type of a JSON Schema ``type`` value (``any`` for a union or unknown)."""
    if isinstance(raw, list):
        raw = raw[0] if len(raw) == 1 else None
    return TYPE_ALIASES.get(raw.lower(), "any") if isinstance(raw, str) else "any"


def _param(name: str, prop: Any, optional: bool) -> Param:
    if not isinstance(prop, Mapping):
        return Param(name, "any", optional)
    kind = json_type(prop.get("type"))
    if prop.get("contentMediaType") == JSON_MEDIA_TYPE:
        kind = "any"  # JSON text a tool reads decoded (pydantic's Json): judged decoded
    bounds = [(op, prop[key]) for key, op in _BOUNDS if _number(prop.get(key))]
    if kind not in ("int", "number"):
        bounds = []
    bound = bounds[0] if bounds else None
    limits = [*bounds[1:], *((key, prop[key]) for key in LENGTH_LIMITS if _count(prop.get(key)))]
    items = prop.get("items")
    item_type = json_type(items.get("type")) if isinstance(items, Mapping) else "any"
    if isinstance(items, Mapping) and items.get("contentMediaType") == JSON_MEDIA_TYPE:
        item_type = "any"  # items read decoded (list[Json[...]]), and judged so
    enum = prop.get("enum")
    return Param(
        name,
        kind,
        optional,
        None,
        bound,
        enum=tuple(enum) if isinstance(enum, list) else None,
        items=None if item_type == "any" else item_type,
        limits=tuple(limits),
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


__all__ = ["LENGTH_LIMITS", "TYPE_ALIASES", "declaration_from_json_schema", "json_type"]
