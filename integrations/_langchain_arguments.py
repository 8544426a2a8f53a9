"""The arguments of a LangChain tool call as the tool will receive them: the one value the
check judges, the trace records and the tool is handed (issue 25, "what is checked is
exactly what runs").

A model's arguments are not what a LangChain tool receives: the tool's own schema
validates them first, coercing ``"9000"`` to ``9000.0``, filling in the defaults the model
left out (``force: bool = True``), dropping the keys it does not declare, running its
validators. Where the call runs, :func:`received_arguments` asks the tool itself
(``BaseTool._parse_input``, what ``tool.invoke`` calls, with the values LangGraph
injected) and returns the result as plain data: the values the tool gets (a
``Decimal``, a ``datetime`` kept as they are: the firewall checks them as their JSON form)
and, where the firewall's snapshot cannot hold a value (an enum member, a set, a nested
model, a path), the form pydantic validates back to it. The adapter proposes that, and
hands the tool the checked snapshot (``Decision.arguments()``): the tool validates it
again on the way in. Whether that gives the very values checked is verified first; a
schema whose validators change their own output when run on it again (one that scales a
number, appends a suffix) would hand the tool something else: such a call is refused,
never run unchecked.

At the model turn, before LangGraph injects anything, :func:`tool_arguments` validates
with the model-facing schema (``tool_call_schema``, which carries no validators of the
tool's own), so the turn's batch is judged on the coerced values too; where the two
differ, the call is judged again where it runs, on what it receives.

Injected arguments (``ToolRuntime``, ``InjectedState``, ``InjectedStore``, the tool-call
id) are not the model's: the check does not judge them, and they are handed to the tool
as LangGraph injected them. A tool whose schema is a JSON Schema dict gets the model's
arguments unvalidated, with the schema's top-level ``default`` values filled in (what the
tool will act on, said explicitly). A structured answer (``response_format``) is turned
into data the same way (:func:`answer_value`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from typing import Any, Final, Union

from agentguard.errors import MissingExtraError, UncheckableArgumentsError
from agentguard.trace.arguments import snapshot_arguments

try:
    from pydantic import BaseModel
    from pydantic_core import SchemaValidator, to_jsonable_python
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


class Rejected:
    """Arguments the tool's schema rejects: why (the tool would never run with them)."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


Arguments = Union[dict[str, Any], Rejected]  # noqa: UP007 - runtime alias on 3.10
"""What :func:`tool_arguments` answers: the arguments as the tool receives them, or why
its schema rejects them."""


def tool_arguments(tool: Any, args: Mapping[str, Any]) -> Arguments:
    """``args`` (the model's, or the call's with injected values in them) as ``tool``
    will receive them from its model-facing schema, injected arguments left out."""
    return _SCHEMAS.of(tool).arguments(args)


def received_arguments(tool: Any, args: Mapping[str, Any], tool_call_id: str | None) -> Arguments:
    """The arguments ``tool`` will receive when invoked with ``args`` (the call's, with
    LangGraph's injected values in them), injected ones left out: validated by the tool
    itself, and verified to validate back to themselves (see the module)."""
    schema = _SCHEMAS.of(tool)
    parse = getattr(tool, "_parse_input", None)
    if not isinstance(schema, _Pydantic) or parse is None:
        return schema.arguments(args)
    injected = schema.injected
    try:
        values = _model_values(parse(dict(args), tool_call_id), injected)
        kept = {k: v for k, v in args.items() if k in injected}
        again = _model_values(parse({**kept, **values}, tool_call_id), injected)
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        return Rejected(_problem(exc))
    if again != values:
        return Rejected(
            "the tool's schema changes them again when the tool reads them, so what would "
            "run is not what was checked"
        )
    return values


def model_arguments(tool: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` as the model gave them: the values LangGraph injected left out."""
    injected = _SCHEMAS.of(tool).injected
    return {k: v for k, v in args.items() if k not in injected}


def _model_values(parsed: Any, injected: frozenset[str]) -> dict[str, Any]:
    if not isinstance(parsed, Mapping):  # text input: not how LangGraph calls a tool
        raise TypeError(f"the tool read its input as {type(parsed).__name__}, not arguments")
    return {str(k): plain_value(v) for k, v in parsed.items() if k not in injected}


def called_arguments(tools: Mapping[str, Any] | None, call: Mapping[str, Any]) -> dict[str, Any]:
    """A model's tool call's arguments as its tool (in ``tools``, by name) will receive
    them; as the model sent them when the tool is unknown here or rejects them (the call
    is then withdrawn where it would run)."""
    raw = call.get("args")
    args: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
    tool = None if tools is None else tools.get(str(call.get("name")))
    if tool is None:
        return args
    arguments = tool_arguments(tool, args)
    return args if isinstance(arguments, Rejected) else arguments


def handed_arguments(
    tool: Any, args: Mapping[str, Any], checked: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments the tool is invoked with: the ``checked`` snapshot, plus the values
    LangGraph injected into ``args`` (its runtime, state, store), as it injected them."""
    injected = _SCHEMAS.of(tool).injected
    out = {k: v for k, v in args.items() if k in injected} if injected else {}
    out.update(checked)
    return out


def answer_value(answer: Any) -> Any:
    """A structured answer as data the firewall checks and the trace records: a pydantic
    model its fields (values as :func:`tool_arguments` gives them), a dataclass the dict
    of its fields, anything else as it is (plain data, or refused by the snapshot)."""
    if isinstance(answer, BaseModel):
        return plain_value(answer)
    if dataclasses.is_dataclass(answer) and not isinstance(answer, type):
        return dataclasses.asdict(answer)
    return answer


# the schemas ------------------------------------------------------------------------
class _Unchecked:
    """A tool without a schema agentguard can read (a pydantic v1 model, an object that
    is no LangChain tool): the model's arguments as they are, injected keys aside."""

    __slots__ = ("injected",)

    def __init__(self, injected: frozenset[str]) -> None:
        self.injected = injected

    def arguments(self, args: Mapping[str, Any]) -> Arguments:
        return {k: v for k, v in args.items() if k not in self.injected}


class _Pydantic:
    """A pydantic v2 model-facing schema: validate, then the values as data."""

    __slots__ = ("injected", "validate")

    def __init__(self, schema: type[BaseModel], injected: frozenset[str]) -> None:
        core = getattr(schema, "__pydantic_validator__", None)
        fast = isinstance(core, SchemaValidator) and schema.__pydantic_complete__
        # the core validator's own entry: what ``model_validate`` calls, one frame less
        self.validate: Callable[[Any], BaseModel] = (
            core.validate_python if fast and core is not None else schema.model_validate
        )
        self.injected = injected

    def arguments(self, args: Mapping[str, Any]) -> Arguments:
        try:
            model = self.validate(args if type(args) is dict else dict(args))
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            return Rejected(_problem(exc))
        return {k: plain_value(v) for k, v in model.model_dump().items()}


class _JsonSchema:
    """A JSON Schema dict: LangChain hands the tool the model's arguments unvalidated."""

    __slots__ = ("defaults", "injected")

    def __init__(self, schema: Mapping[str, Any], injected: frozenset[str]) -> None:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        self.defaults = {
            str(k): p["default"]
            for k, p in properties.items()
            if isinstance(p, Mapping) and "default" in p
        }
        self.injected = injected

    def arguments(self, args: Mapping[str, Any]) -> Arguments:
        out = {k: v for k, v in args.items() if k not in self.injected}
        for key, value in self.defaults.items():
            out.setdefault(key, value)
        return out


class _Schemas:
    """Each tool's model-facing schema, remembered by tool: reading ``tool_call_schema``
    costs more than validating with it.

    LangChain memoizes that schema per tool and rebuilds it when the tool's ``name``,
    ``description`` or ``args_schema`` is reassigned; the entry kept here is dropped on the
    same reassignments. A tool class with its own ``tool_call_schema`` is asked every
    time, as are objects that are not LangChain tools.
    """

    __slots__ = ("_known", "_memoizing")

    LIMIT = 1024  # tools made afresh per request must not pile up

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, Any, Any, Any, _Schema]] = {}
        self._memoizing: dict[type, bool] = {}  # tool class -> LangChain's memoized schema?

    def of(self, tool: Any) -> _Schema:
        memoizing = self._memoizing.get(type(tool))
        if memoizing is None:
            memoizing = self._memoizing[type(tool)] = _memoizes(type(tool))
        if not memoizing:
            return _schema(tool)
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
        schema = _schema(tool)
        if len(self._known) >= self.LIMIT:
            self._known.clear()
        self._known[id(tool)] = (tool, name, description, args_schema, schema)
        return schema


_Schema = Union[_Pydantic, _JsonSchema, _Unchecked]  # noqa: UP007 - runtime alias on 3.10


def _schema(tool: Any) -> _Schema:
    schema = getattr(tool, "tool_call_schema", None)
    injected = _injected_keys(tool)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        full = _fields(tool)
        return _Pydantic(schema, injected | (full - frozenset(schema.model_fields)))
    if isinstance(schema, Mapping):
        return _JsonSchema(schema, injected)
    return _Unchecked(injected)


def _fields(tool: Any) -> frozenset[str]:
    """The fields of the tool's whole input schema (the model's and the injected ones)."""
    try:
        full = tool.get_input_schema()
    except Exception:  # noqa: BLE001 - a tool's own schema may fail: nothing more known
        return frozenset()
    fields = getattr(full, "model_fields", None)
    return frozenset(fields) if isinstance(fields, Mapping) else frozenset()


def _memoizes(cls: type) -> bool:
    """Are ``cls``'s objects LangChain tools with LangChain's memoized ``tool_call_schema``?"""
    from langchain_core.tools import BaseTool

    if not issubclass(cls, BaseTool):
        return False
    schema: object = cls.tool_call_schema
    return schema is BaseTool.tool_call_schema and hasattr(BaseTool, "_tool_call_schema_memo")


def _injected_keys(tool: Any) -> frozenset[str]:
    """The arguments LangGraph injects into ``tool`` (its runtime, state, store)."""
    try:
        keys = getattr(tool, "_injected_args_keys", None)
    except Exception:  # noqa: BLE001 - a tool's own property may fail: nothing known
        return frozenset()
    return frozenset(keys) if isinstance(keys, (set, frozenset)) else frozenset()


_SCHEMAS: Final = _Schemas()


# values as data ---------------------------------------------------------------------
_KEPT: Final = (str, int, float, bool, type(None))
"""Values a snapshot holds as they are (exact types; dates, decimals and UUIDs are
recognised by ``snapshot_arguments`` itself)."""


def plain_value(value: Any) -> Any:
    """``value`` as snapshot data that validates back to it: itself where the snapshot
    holds it (text, numbers, dates, decimals), containers walked, a nested model its
    fields, an enum member its value, a set a sorted list, anything else the JSON form
    pydantic writes for it (a path as text)."""
    kind = type(value)
    if kind in _KEPT:
        return value
    if kind is dict and all(type(k) is str for k in value):
        return {k: plain_value(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [plain_value(v) for v in value]
    if isinstance(value, BaseModel):
        return plain_value(value.model_dump())
    if isinstance(value, enum.Enum):
        return plain_value(value.value)
    if isinstance(value, (set, frozenset)):
        members = [plain_value(v) for v in value]
        try:
            return sorted(members)
        except TypeError:  # members of mixed types: pydantic's order
            return members
    try:
        snapshot_arguments({"value": value})
    except UncheckableArgumentsError:
        return to_jsonable_python(value)
    return value  # a date, a Decimal, a UUID: checked as its JSON form, handed as is


def _problem(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in errors()]
        return "; ".join(parts) or str(exc)
    return str(exc)


__all__ = [
    "Arguments",
    "Rejected",
    "answer_value",
    "called_arguments",
    "handed_arguments",
    "model_arguments",
    "plain_value",
    "received_arguments",
    "tool_arguments",
]
