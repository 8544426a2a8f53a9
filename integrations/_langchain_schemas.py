"""How a LangChain tool reads its arguments, per tool, remembered.

Two readings (``_langchain_arguments`` says when each is used):

* the model-facing schema (``tool_call_schema``: what the model fills in, injected
  arguments excluded, the tool's own validators not part of it): :meth:`_Reader.arguments`;
* the tool's own input schema (``args_schema``), read as ``BaseTool._parse_input`` reads
  it on every ``invoke`` (validate, then keep the fields given or declared with a
  default; the tool-call id filled into ``InjectedToolCallId`` fields), with what it
  needs worked out once per tool rather than on every call as ``_parse_input`` does:
  :meth:`_Reader.received`. When that schema runs functions of its own (validators, a
  custom type), whether it gives back what it is given is verified call by call.

A JSON Schema dict is not validated by LangChain: the tool gets the model's arguments as
they are, and passes them on to whatever the schema describes (langchain-mcp-adapters
forwards them to an MCP server, which fills in the schema's defaults, nested ones too, and
converts ``"9000"`` to ``9000.0``). So they are read by the MCP gateway's rule
(``agentguard.trace.mcp_arguments``): defaults filled in at every depth, and a value whose
reading by the server is not known (text for a number, JSON in text the server decodes, a
key the schema does not declare) refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

from agentguard.errors import MissingExtraError
from agentguard.trace.mcp_arguments import server_arguments

from ._langchain_values import plain_value, problem_of
from ._pydantic_fields import handed_form, reshapes

try:
    from pydantic import BaseModel
    from pydantic_core import SchemaValidator
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


class Rejected:
    """Arguments the tool would not run with, and why (its schema rejects them)."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


Arguments = dict[str, Any] | Rejected
"""The arguments as the tool receives them, or why it would not run with them."""

CHANGED: Final = (
    "the tool's schema changes them again when the tool reads them, so what would run "
    "is not what was checked"
)


class _Reader:
    """One tool's schemas: how it reads a model's call, and a LangGraph invocation."""

    __slots__ = (
        "call",
        "defaults",
        "fields",
        "full",
        "id_keys",
        "injected",
        "json",
        "reshaped",
        "verify",
    )

    def __init__(self, tool: Any) -> None:
        self.injected = _injected_keys(tool)
        self.call: Callable[[Any], BaseModel] | None = None
        self.json: Mapping[str, Any] | None = None  # a JSON Schema (a dict, not a model)
        self.full: Callable[[Any], BaseModel] | None = None
        self.fields: tuple[str, ...] = ()
        self.defaults: frozenset[str] = frozenset()
        self.id_keys: tuple[str, ...] = ()
        self.verify = False
        self.reshaped: type[BaseModel] | None = None  # handed in another form (Json, aliases)
        schema = getattr(tool, "tool_call_schema", None)
        if _is_model(schema):
            self.call = _validator(schema)
            self.injected |= _fields(tool) - frozenset(schema.model_fields)
        elif isinstance(schema, Mapping):
            self.json = schema
        full = getattr(tool, "args_schema", None)
        if _is_model(full):
            self.full = _validator(full)
            fields = full.model_fields
            self.fields = tuple(fields)
            self.defaults = frozenset(
                k for k, f in fields.items() if not f.is_required() and k not in ("args", "kwargs")
            )
            self.id_keys = _tool_call_id_keys(full)
            self.reshaped = full if reshapes(full) else None
            self.verify = self.reshaped is not None or _runs_functions(
                getattr(full, "__pydantic_core_schema__", None)
            )

    def arguments(self, args: Mapping[str, Any]) -> Arguments:
        """A model's arguments as the model-facing schema gives them."""
        if self.call is None:
            return self._unvalidated(args)
        try:
            model = self.call(args if type(args) is dict else dict(args))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            return Rejected(problem_of(exc))
        values: dict[str, Any] = plain_value(model)  # its fields, not a dump (excluded ones too)
        return values

    def received(self, args: Mapping[str, Any], tool_call_id: str | None) -> Arguments | None:
        """What the tool's own schema hands the tool for a LangGraph invocation with
        ``args`` (injected values in them), injected ones left out; None when the tool
        has no pydantic v2 schema of its own (ask ``_parse_input``)."""
        if self.full is None:
            return None
        try:
            values = self._read(args, tool_call_id)
            if self.verify:  # the tool reads the snapshot again: the same values?
                kept = {k: v for k, v in args.items() if k in self.injected}
                if self._read({**kept, **self.hand(values)}, tool_call_id) != values:
                    return Rejected(CHANGED)
        except ValueError as exc:
            return Rejected(problem_of(exc))
        return values

    def hand(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Checked values in the form the tool's schema reads them (``_pydantic_fields``:
        ``Json`` fields as text, aliased fields under their alias)."""
        if self.reshaped is None:
            return dict(values)
        return handed_form(self.reshaped, values)

    def _read(self, args: Mapping[str, Any], tool_call_id: str | None) -> dict[str, Any]:
        if self.full is None:  # pragma: no cover - checked by the caller
            raise ValueError("no schema")
        given = dict(args)
        for key in self.id_keys:
            if tool_call_id is None:
                raise ValueError(f"{key}: the tool needs the tool-call id, and none was given")
            given[key] = tool_call_id
        model = self.full(given)
        provided, injected, defaults = model.model_fields_set, self.injected, self.defaults
        out = {
            k: plain_value(getattr(model, k))
            for k in self.fields
            if k not in injected and (k in given or k in provided or k in defaults)
        }
        extra = model.__pydantic_extra__
        if extra:
            out.update((k, plain_value(v)) for k, v in extra.items() if k not in injected)
        return out

    def _unvalidated(self, args: Mapping[str, Any]) -> Arguments:
        given = {k: v for k, v in args.items() if k not in self.injected}
        if self.json is None:
            return given
        read = server_arguments(self.json, given)
        return read.args if read.problem is None else Rejected(read.problem)


def _is_model(schema: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(schema, type) and issubclass(schema, BaseModel)


def _validator(schema: Any) -> Callable[[Any], BaseModel]:
    """The schema's core validator's own entry (what ``model_validate`` calls, without
    the classmethod's frame and keywords on every call), else ``model_validate``."""
    core = getattr(schema, "__pydantic_validator__", None)
    if isinstance(core, SchemaValidator) and getattr(schema, "__pydantic_complete__", False):
        fast: Callable[[Any], BaseModel] = core.validate_python
        return fast
    validate: Callable[[Any], BaseModel] = schema.model_validate
    return validate


_FUNCTIONS: Final = frozenset(
    ("function-before", "function-after", "function-wrap", "function-plain")
)
"""Core-schema nodes that run a function of the schema's own (a validator, a custom type)."""


def _runs_functions(core: Any) -> bool:
    """Does a pydantic core schema run a function of its own anywhere (nested models and
    definitions included)? Standard types and constraints give back what they are given."""
    stack = [core]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if node.get("type") in _FUNCTIONS:
                return True
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return False


def _tool_call_id_keys(schema: Any) -> tuple[str, ...]:
    """The fields LangChain fills with the tool-call id (``InjectedToolCallId``)."""
    try:
        from langchain_core.tools.base import (
            InjectedToolCallId,
            _is_injected_arg_type,
            get_all_basemodel_annotations,
        )
    except ImportError:  # pragma: no cover - a langchain-core without them
        return ()
    annotations = get_all_basemodel_annotations(schema)
    return tuple(
        k
        for k, v in annotations.items()
        if _is_injected_arg_type(v, injected_type=InjectedToolCallId)
    )


def _injected_keys(tool: Any) -> frozenset[str]:
    """The arguments LangGraph injects into ``tool`` (its runtime, state, store)."""
    try:
        keys = getattr(tool, "_injected_args_keys", None)
    except Exception:  # noqa: BLE001 - a tool's own property may fail: nothing known
        return frozenset()
    return frozenset(keys) if isinstance(keys, (set, frozenset)) else frozenset()


def _fields(tool: Any) -> frozenset[str]:
    """The fields of the tool's whole input schema (the model's and the injected ones)."""
    try:
        full = tool.get_input_schema()
    except Exception:  # noqa: BLE001 - a tool's own schema may fail: nothing more known
        return frozenset()
    fields = getattr(full, "model_fields", None)
    return frozenset(fields) if isinstance(fields, Mapping) else frozenset()


class _Readers:
    """Each tool's :class:`_Reader`, remembered by tool: reading ``tool_call_schema``
    costs more than validating with it.

    LangChain memoizes that schema per tool and rebuilds it when the tool's ``name``,
    ``description`` or ``args_schema`` is reassigned; the reader kept here is dropped on
    the same reassignments. A tool class with its own ``tool_call_schema`` is read every
    time, as are objects that are not LangChain tools.
    """

    __slots__ = ("_known", "_memoizing")

    LIMIT = 1024  # tools made afresh per request must not pile up

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, Any, Any, Any, _Reader]] = {}
        self._memoizing: dict[type, bool] = {}  # tool class -> LangChain's memoized schema?

    def of(self, tool: Any) -> _Reader:
        memoizing = self._memoizing.get(type(tool))
        if memoizing is None:
            memoizing = self._memoizing[type(tool)] = _memoizes(type(tool))
        if not memoizing:
            return _Reader(tool)
        known = self._known.get(id(tool))
        name, description, args_schema = tool.name, tool.description, tool.args_schema
        if (
            known is not None
            and known[0] is tool
            and known[1] is name
            and known[2] is description
            and known[3] is args_schema
        ):
            return known[4]
        reader = _Reader(tool)
        if len(self._known) >= self.LIMIT:
            self._known.clear()
        self._known[id(tool)] = (tool, name, description, args_schema, reader)
        return reader


def _memoizes(cls: type) -> bool:
    """Are ``cls``'s objects LangChain tools with LangChain's memoized ``tool_call_schema``?"""
    from langchain_core.tools import BaseTool

    if not issubclass(cls, BaseTool):
        return False
    schema: object = cls.tool_call_schema
    return schema is BaseTool.tool_call_schema and hasattr(BaseTool, "_tool_call_schema_memo")


READERS: Final = _Readers()


__all__ = ["CHANGED", "READERS", "Arguments", "Rejected"]
