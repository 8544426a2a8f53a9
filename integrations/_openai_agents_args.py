"""A function tool's arguments as the tool will receive them, and the text it is given.

The model writes a call's arguments as JSON text; the SDK's ``function_tool`` parses it,
validates it with the function's pydantic model (``"9000"`` becomes ``9000.0`` for an
``amount: float``; an omitted ``force: bool = True`` becomes ``True``) and calls the
function with the result. Judging the model's text would judge another value than the
one that runs, so the adapter judges the *validated* arguments, in their JSON form
(:func:`prepare`), and hands the tool that very snapshot as its JSON text. The SDK
validates it again on the way in; the snapshot is kept only where that second
validation gives it back unchanged, so the tool receives exactly what was checked.

A tool built by hand (a ``FunctionTool`` with its own ``on_invoke_tool``, no pydantic
model) receives the JSON text and parses it itself: its arguments are the JSON object,
and it is given the checked object's JSON text.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from pydantic import BaseModel, SecretBytes, SecretStr, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from agentguard.errors import MissingExtraError

from ._openai_agents_install import ApprovalPolicy
from ._openai_agents_receipt import adapter_of
from ._pydantic_fields import revealed

try:
    from agents import FunctionTool, ModelBehaviorError
    from agents._function_tool_arguments import PreparedFunctionArguments
    from agents.agent_tool_state import get_agent_tool_state_scope, peek_agent_tool_run_result
    from agents.function_schema import FuncSchema
    from agents.tool import maybe_invoke_function_tool_failure_error_function
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

_DUMP: Final[dict[str, Any]] = {"mode": "python", "by_alias": True, "round_trip": True}
"""How validated arguments are read back: under the keys the model writes (aliases), in
a form the same validation reads back."""


@dataclass(frozen=True)
class Prepared:
    """One call's arguments: ``args`` to judge; ``text`` the JSON the tool is given, or
    None when the call cannot run (``problem`` says why: the SDK would refuse it too)."""

    raw: str
    args: dict[str, Any]
    text: str | None
    problem: str | None = None

    @property
    def runnable(self) -> bool:
        return self.text is not None


def prepare(tool: FunctionTool, raw: str | None) -> Prepared:
    """The arguments ``tool`` would receive for the model's JSON ``raw``."""
    return prepare_for(tool.name, sdk_invoker(tool), raw)


def prepare_for(name: str, invoker: Any, raw: str | None) -> Prepared:
    """:func:`prepare` for the tool ``name`` whose SDK invoker is ``invoker``."""
    text = raw or ""
    try:
        parsed = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        return Prepared(text, {}, None, f"Invalid JSON input for tool {name}: {exc}")
    if not isinstance(parsed, dict):
        return Prepared(text, {}, None, f"Invalid JSON input for tool {name}: not an object")
    validator = _validator(invoker)
    if validator is None:  # the tool parses its JSON itself: the object is what it gets
        return Prepared(text, parsed, tool_text(parsed))
    validate, dump = validator
    try:
        validated = validate(parsed)
        checked = held(validated)
        handed = tool_text(_plain(dump(validated)))
        back = held(validate(json.loads(handed)))
    except (ValidationError, ValueError, TypeError) as exc:
        return Prepared(text, parsed, None, f"Invalid JSON input for tool {name}: {exc}")
    if tool_text(back) != tool_text(checked):  # the function would get other values
        problem = (
            f"the arguments of {name} do not survive its own validation unchanged "
            f"({tool_text(checked)} became {tool_text(back)}: a validator that changes its "
            "own output, a field its dumps leave out, or a value JSON cannot carry), so "
            "agentguard cannot hand it what it checked"
        )
        return Prepared(text, checked, None, problem)
    return Prepared(text, checked, handed)


def handed_text(prepared: Prepared, args: Mapping[str, Any]) -> str:
    """The JSON text the tool is handed for the checked ``args``: the text prepared for
    them (``Json`` fields as the text they read, ``_pydantic_fields``), else theirs."""
    if prepared.text is not None and same_arguments(args, prepared.args):
        return prepared.text
    return tool_text(args)


def handover(
    tool: FunctionTool, text: str, judged: Mapping[str, Any]
) -> PreparedFunctionArguments | str | None:
    """The arguments the SDK hands ``tool``'s function for the checked JSON ``text``,
    validated once, here, as the SDK's own preparation does. The SDK takes them as
    prepared and does not validate again, so the function receives these very objects;
    they must hold the ``judged`` values. A validator whose answer changes between calls (a
    counter, the clock, a file) gives itself away here: the problem is returned instead,
    and the function never runs. None: the tool's invoker takes no prepared arguments (a
    tool built by hand parses its JSON itself: it is handed ``text``)."""
    schema, owner = None, None
    for value in _closure(sdk_invoker(tool)):
        if isinstance(value, FuncSchema):
            schema = value
        elif callable(value) and getattr(value, "__name__", None) == "_prepare_arguments":
            owner = value  # the SDK accepts prepared arguments only under its own name
    if schema is None or owner is None:
        return None
    try:
        parsed = schema.params_pydantic_model(**json.loads(text))
        received = tool_text(held(parsed))
        args, kwargs = schema.to_call_args(parsed)
    except Exception as exc:  # noqa: BLE001 - a validator's own KeyError too: never ran
        if isinstance(exc, (ValidationError, ValueError, TypeError)):
            return f"Invalid JSON input for tool {tool.name}: {exc}"
        return f"the validation of {tool.name}'s arguments raised {type(exc).__name__}, so it never ran"
    if received != tool_text(judged):
        return (
            f"the validation of {tool.name}'s arguments gave it {received}, not the "
            f"{tool_text(judged)} checked (a validator whose answer changes between calls), "
            "so it never ran"
        )
    return PreparedFunctionArguments(owner=owner, arguments=text, args=args, kwargs=kwargs)


def validated_text(adapter: TypeAdapter[Any], parsed: Any) -> str:
    """The JSON text of arguments an adapter validated, as :func:`prepare` renders them."""
    return tool_text(_plain(adapter.dump_python(parsed, **_DUMP)))


def tool_text(args: Mapping[str, Any]) -> str:
    """The JSON a tool is handed for checked arguments: a decimal, a date or a UUID
    written as pydantic writes it (so the tool's validation reads the same value back)."""
    return json.dumps(args, default=to_jsonable_python)


def sdk_invoker(tool: FunctionTool) -> Any:
    """The SDK's invoker of ``tool`` (under agentguard's, when the tool is guarded)."""
    invoker = tool.on_invoke_tool
    return getattr(invoker, "agentguard_inner", invoker)


def _validator(invoker: Any) -> tuple[Any, Any] | None:
    """The validation the SDK applies to the arguments of the tool ``invoker`` runs: a
    function from the parsed JSON to the validated arguments, and one dumping those in
    the form the validation reads back (by alias; ``Json`` fields as text); None for a
    tool without one."""
    for value in _closure(invoker):
        if isinstance(value, FuncSchema):
            return _model_validation(value.params_pydantic_model)
        adapter = adapter_of(value)
        if adapter is not None:  # Agent.as_tool validates with an adapter
            return _adapter_validation(adapter)
    return None


def _model_validation(model: type[BaseModel]) -> tuple[Any, Any]:
    def dump(validated: BaseModel) -> Any:
        return validated.model_dump(**_DUMP)

    return (lambda data: model(**data)), dump


def _adapter_validation(adapter: TypeAdapter[Any]) -> tuple[Any, Any]:
    def dump(validated: Any) -> Any:
        return adapter.dump_python(validated, **_DUMP)

    return adapter.validate_python, dump


def held(value: Any) -> Any:
    """Validated arguments as the function holds them, as plain data: a model's fields
    read one by one (a dump would run its serializers, leave out excluded fields, write
    a ``Json`` field as text and a ``Base64Str`` encoded), under the names the model
    writes (aliases), values as :func:`_plain` gives them (a secret as its value)."""
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for name, field in type(value).model_fields.items():
            out[field.serialization_alias or field.alias or name] = held(getattr(value, name))
        extra = value.__pydantic_extra__
        if extra:
            out.update((_key(k), held(v)) for k, v in extra.items())
        return out
    kind = type(value)
    if kind is dict:
        return {_key(k): held(v) for k, v in value.items()}
    if kind in (list, tuple):
        return [held(v) for v in value]
    return _plain(value)


def _plain(value: Any) -> Any:
    """Validated arguments as the firewall checks them: plain JSON data, with decimals,
    dates, times and UUIDs kept as they are (judged by value: a ``Decimal`` amount is a
    number to the spec, where pydantic's JSON would make it text); anything else (an
    enum, a set, a path, bytes) as pydantic writes it in JSON."""
    kind = type(value)
    if kind in _KEPT:
        return value
    if kind is dict:
        return {_key(k): _plain(v) for k, v in value.items()}
    if kind is SecretStr or kind is SecretBytes:  # the value the function gets, not a mask
        return _plain(revealed(value))
    if kind in (list, tuple):
        return [_plain(v) for v in value]
    if kind in (set, frozenset):  # in one order, whatever order the set iterates in
        return sorted((_plain(v) for v in value), key=tool_text_of)
    return _plain_json(to_jsonable_python(value))


def tool_text_of(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=to_jsonable_python)


def _plain_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return value


def _key(key: Any) -> str:
    return key if type(key) is str else str(to_jsonable_python(key))


_KEPT: Final = frozenset(
    (str, int, float, bool, type(None), Decimal, dt.date, dt.datetime, dt.time, dt.timedelta)
) | frozenset((uuid.UUID,))


def _closure(invoker: Any) -> list[Any]:
    """The values the SDK's invoker closes over (its schema among them): read from the
    invoker ``function_tool`` and ``Agent.as_tool`` build, through the failure handler."""
    inner = getattr(invoker, "_invoke_tool_impl", invoker)
    cells = getattr(inner, "__closure__", None) or ()
    values = []
    for cell in cells:
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    return values


async def failure_reply(tool: FunctionTool, context: Any, problem: str) -> Any:
    """What the SDK answers a call whose arguments it cannot use: its failure handler's
    text (the default, or the tool's ``failure_error_function``); raises the error when
    the tool has none (``failure_error_function=None``), as the SDK would."""
    error = ModelBehaviorError(problem)
    reply = await maybe_invoke_function_tool_failure_error_function(
        function_tool=tool, context=context, error=error
    )
    if reply is None:
        raise error
    return reply


def turn_calls(agent: Any, response: Any) -> tuple[list[tuple[str, Prepared, str]], list[str]]:
    """A model turn's function calls: the id of each, and those that run now with their
    arguments as the tools will receive them. A call waiting for a human's approval
    (``needs_approval=True``) is judged when it runs, after the approval, not with its
    turn (a policy function's call is withdrawn from its turn when the policy sends it
    to a human); a handoff (``transfer_to_...``) is not a tool call; unreadable JSON
    never runs. A call id repeated in the turn is one call: the SDK runs a verbatim repeat
    once and refuses the turn when the repeat differs (``ModelBehaviorError``), so only
    its first occurrence is judged (judging both, the repeat's "only one of them would
    run" refusal replaced the call's own decision)."""
    tools = {t.name: t for t in agent.tools if isinstance(t, FunctionTool)}
    calls: list[tuple[str, Prepared, str]] = []
    ids: list[str] = []
    for item in response.output:
        if getattr(item, "type", None) != "function_call":
            continue
        call_id = str(item.call_id)
        if call_id in ids:
            continue
        ids.append(call_id)
        tool = tools.get(item.name)
        if tool is None or tool.needs_approval is True or not _approval_followed(tool):
            continue
        prepared = prepare(tool, item.arguments)
        if prepared.problem is None or prepared.args:
            calls.append((tool.name, prepared, call_id))
    return calls, ids


def _approval_followed(tool: FunctionTool) -> bool:
    """Does agentguard hear of this tool's calls that wait for approval? A policy
    function it wrapped says so when it sends one to a human; one set afterwards does not,
    so such calls are judged when they run instead."""
    policy = tool.needs_approval
    return policy is False or isinstance(policy, ApprovalPolicy)


def nested_pause(tool: FunctionTool, context: Any) -> bool:
    """Did the agent of an agent tool (``Agent.as_tool``) pause for an approval? The SDK
    keeps its run for the resume and runs the tool again then."""
    if getattr(tool, "_agent_instance", None) is None or context.tool_call is None:
        return False
    scope = get_agent_tool_state_scope(context)
    pending = peek_agent_tool_run_result(context.tool_call, scope_id=scope)
    return bool(getattr(pending, "interruptions", None))


def same_arguments(left: Mapping[str, Any], right: Mapping[str, Any]) -> bool:
    """Equal as JSON (the key order aside)."""
    return json.dumps(left, sort_keys=True, default=to_jsonable_python) == json.dumps(
        right, sort_keys=True, default=to_jsonable_python
    )


__all__ = [
    "Prepared",
    "failure_reply",
    "handed_text",
    "handover",
    "nested_pause",
    "prepare",
    "prepare_for",
    "same_arguments",
    "sdk_invoker",
    "tool_text",
    "turn_calls",
    "validated_text",
]
