"""Tool schemas for the schema and dependency checks, from three sources.

* ``.ltl`` tool declarations (:func:`schemas_from_spec`, reads ``Spec.tools``),
* JSON Schema documents: OpenAI/BFCL function definitions or ``{tool: schema}``
  (:func:`schemas_from_json_schema`),
* a plain ``{tool: [param, ...]}`` or ``{tool: {param: type}}`` mapping
  (:func:`schemas_from_params`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from agentguard.language.ast import Spec, ToolDecl
from agentguard.pec.errors import PecError
from agentguard.tools.values import fits_type, within_bound

TYPE_NAMES = ("str", "number", "int", "bool", "list", "dict", "any")

_JSON_TYPES = {
    "string": "str",
    "str": "str",
    "integer": "int",
    "int": "int",
    "number": "number",
    "float": "number",
    "boolean": "bool",
    "bool": "bool",
    "array": "list",
    "list": "list",
    "tuple": "list",
    "object": "dict",
    "dict": "dict",
    "any": "any",
}


@dataclass(frozen=True, slots=True)
class ParamSchema:
    """One parameter: type, whether required, bound or enum, and its data source if any."""

    name: str
    type: str = "any"
    required: bool = True
    source: str | None = None
    """Tool whose earlier results must contain the value (``from results(tool)``)."""
    source_path: tuple[str | int, ...] = ()
    bound: tuple[str, Any] | None = None
    enum: tuple[Any, ...] | None = None
    items: str | None = None
    """Element type of a ``list`` parameter, when declared."""

    def __post_init__(self) -> None:
        if self.type not in TYPE_NAMES:
            raise PecError(f"parameter {self.name!r}: unknown type {self.type!r}")


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """A tool's parameters plus its explicit precondition (an AgentLTL formula or None)."""

    name: str
    params: tuple[ParamSchema, ...] = ()
    requires: Any = None
    allow_extra: bool = False

    def param(self, name: str) -> ParamSchema | None:
        return next((p for p in self.params if p.name == name), None)


ToolSchemas = Mapping[str, ToolSchema]


# -------------------------------------------------------------------- type checks
_BOUND_OPS: Final = frozenset({"=", "==", "!=", "<", "<=", ">", ">=", "~"})


def argument_problem(schema: ToolSchema, args: Mapping[str, Any]) -> str | None:
    """Why ``args`` do not fit ``schema``, or None when they do."""
    for p in schema.params:
        if p.required and p.name not in args:
            return f"missing required argument {p.name!r}"
    for name, value in args.items():
        declared = schema.param(name)
        if declared is None:
            if schema.allow_extra:
                continue
            return f"unexpected argument {name!r}"
        problem = _value_problem(declared, value)
        if problem:
            return f"argument {name!r}: {problem}"
    return None


def _value_problem(p: ParamSchema, value: Any) -> str | None:
    if value is None and not p.required:
        return None
    if not fits_type(value, p.type):
        return f"expected {p.type}, got {type(value).__name__} {value!r}"
    if p.items and isinstance(value, (list, tuple)):
        bad = next((v for v in value if not fits_type(v, p.items)), None)
        if bad is not None:
            return f"list element {bad!r} is not {p.items}"
    if p.enum is not None and value not in p.enum:
        return f"{value!r} is not one of {list(p.enum)}"
    if p.bound is not None:
        # the firewall's bound semantics (AgentLTL comparison: a bool never equals a number)
        op, limit = p.bound
        if op in _BOUND_OPS and not within_bound(value, "=" if op == "==" else op, limit):
            if op == "~":
                return f"{value!r} does not match /{limit}/"
            return f"{value!r} violates bound {op} {limit!r}"
    return None


# --------------------------------------------------------------- from .ltl specs
def schema_from_decl(decl: ToolDecl) -> ToolSchema:
    """A :class:`ToolSchema` from one ``tool`` declaration of an ``.ltl`` spec."""
    params = []
    for p in decl.params:
        source = p.source
        # only ``from results(tool...)`` is a data dependency on earlier outputs
        tool = source.tool if source is not None and source.extractor == "results" else None
        path = source.path if source is not None else ()
        bound = p.bound
        if bound is not None:
            bound = (bound[0], getattr(bound[1], "value", bound[1]))
        params.append(
            ParamSchema(
                name=p.name,
                type=p.type,
                required=not p.optional,
                source=tool,
                source_path=tuple(path),
                bound=bound,
            )
        )
    return ToolSchema(decl.name, tuple(params), decl.requires)


def schemas_from_spec(spec: Spec) -> dict[str, ToolSchema]:
    """Schemas of every ``tool`` declared in a spec (``Spec.tools``)."""
    return {decl.name: schema_from_decl(decl) for decl in spec.tools}


# -------------------------------------------------------------- from JSON Schema
def schemas_from_json_schema(doc: Any) -> dict[str, ToolSchema]:
    """Schemas from function definitions.

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
    out: dict[str, ToolSchema] = {}
    for item in doc:
        fn = item.get("function", item) if isinstance(item, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise PecError(f"function definition without a name: {item!r:.80}")
        out[fn["name"]] = _from_object_schema(fn["name"], fn.get("parameters", {}))
    return out


def _from_object_schema(name: str, schema: Any) -> ToolSchema:
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
            ParamSchema(
                name=str(pname),
                type=_json_type(pschema.get("type")),
                required=pname in required,
                enum=tuple(enum) if isinstance(enum, list) else None,
                items=None if item_type == "any" else item_type,
            )
        )
    extra = schema.get("additionalProperties", False) is not False
    return ToolSchema(name, tuple(params), None, extra)


def _json_type(raw: Any) -> str:
    if isinstance(raw, list):  # ["string", "null"]: take the first non-null type
        raw = next((t for t in raw if t != "null"), "any")
    return _JSON_TYPES.get(str(raw).lower(), "any") if raw is not None else "any"


# ---------------------------------------------------------------- from a mapping
def schemas_from_params(
    tools: Mapping[str, Iterable[str] | Mapping[str, str]],
) -> dict[str, ToolSchema]:
    """From ``{tool: ["a", "b?"]}`` (``?`` = optional, any type) or ``{tool: {"a": "int"}}``."""
    out: dict[str, ToolSchema] = {}
    for tool, params in tools.items():
        entries = params.items() if isinstance(params, Mapping) else ((p, "any") for p in params)
        built = []
        for raw_name, type_name in entries:
            optional = raw_name.endswith("?")
            name = raw_name.rstrip("?")
            built.append(ParamSchema(name, _JSON_TYPES.get(type_name, type_name), not optional))
        out[tool] = ToolSchema(tool, tuple(built))
    return out


__all__ = [
    "TYPE_NAMES",
    "ParamSchema",
    "ToolSchema",
    "ToolSchemas",
    "argument_problem",
    "fits_type",
    "schema_from_decl",
    "schemas_from_json_schema",
    "schemas_from_params",
    "schemas_from_spec",
]
