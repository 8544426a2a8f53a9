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

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, TypeAdapter, ValidationError

from agentguard.errors import MissingExtraError

try:
    from agents import FunctionTool, ModelBehaviorError
    from agents.agent_tool_state import get_agent_tool_state_scope, peek_agent_tool_run_result
    from agents.function_schema import FuncSchema
    from agents.tool import maybe_invoke_function_tool_failure_error_function
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

_DUMP: Final[dict[str, Any]] = {"mode": "json", "by_alias": True, "round_trip": True}
"""How validated arguments become the snapshot: JSON data, under the keys the model
writes (aliases), in a form the same validation reads back."""


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
    return prepare_for(tool.name, _sdk_invoker(tool), raw)


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
        return Prepared(text, parsed, json.dumps(parsed))
    try:
        checked = validator(parsed)
        again = validator(json.loads(json.dumps(checked)))
    except (ValidationError, ValueError, TypeError) as exc:
        return Prepared(text, parsed, None, f"Invalid JSON input for tool {name}: {exc}")
    if not same_arguments(again, checked):  # a validator that changes its own output
        problem = (
            f"the arguments of {name} do not survive its own validation unchanged "
            f"({checked!r} became {again!r}), so agentguard cannot hand it what it checked"
        )
        return Prepared(text, checked, None, problem)
    return Prepared(text, checked, json.dumps(checked))


def _sdk_invoker(tool: FunctionTool) -> Any:
    """The SDK's invoker of ``tool`` (under agentguard's, when the tool is guarded)."""
    invoker = tool.on_invoke_tool
    return getattr(invoker, "agentguard_inner", invoker)


def _validator(invoker: Any) -> Any:
    """The validation the SDK applies to the arguments of the tool ``invoker`` runs, as
    a function from the parsed JSON to the validated arguments' JSON data; None for a
    tool without one."""
    for value in _closure(invoker):
        if isinstance(value, FuncSchema):
            model: type[BaseModel] = value.params_pydantic_model
            return lambda data: model(**data).model_dump(**_DUMP)
        if isinstance(value, TypeAdapter):  # Agent.as_tool validates with an adapter
            adapter: TypeAdapter[Any] = value
            return lambda data: adapter.dump_python(adapter.validate_python(data), **_DUMP)
    return None


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
    (``needs_approval``) is judged when it runs, after the approval, not with its turn;
    a handoff (``transfer_to_...``) is not a tool call; unreadable JSON never runs."""
    tools = {t.name: t for t in agent.tools if isinstance(t, FunctionTool)}
    calls: list[tuple[str, Prepared, str]] = []
    ids: list[str] = []
    for item in response.output:
        if getattr(item, "type", None) != "function_call":
            continue
        call_id = str(item.call_id)
        ids.append(call_id)
        tool = tools.get(item.name)
        if tool is None or tool.needs_approval is not False:
            continue
        prepared = prepare(tool, item.arguments)
        if prepared.problem is None or prepared.args:
            calls.append((tool.name, prepared, call_id))
    return calls, ids


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
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


__all__ = [
    "Prepared",
    "failure_reply",
    "nested_pause",
    "prepare",
    "prepare_for",
    "same_arguments",
    "turn_calls",
]
