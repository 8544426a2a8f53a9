"""The arguments of a LangChain tool call as the tool will receive them: the one value the
check judges, the trace records and the tool is handed (issue 25, "what is checked is
exactly what runs").

A model's arguments are not what a LangChain tool receives: the tool's own schema
validates them first, coercing ``"9000"`` to ``9000.0``, filling in the defaults the model
left out (``force: bool = True``), dropping the keys it does not declare, running its
validators. Where the call runs, :func:`received_arguments` reads the call as the tool
itself will (``BaseTool._parse_input``, what ``tool.invoke`` calls, on the values LangGraph
injected; ``_langchain_schemas``) and returns the result as plain data: the values the tool gets (a
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
as LangGraph injected them. A tool whose schema is a JSON Schema dict (an MCP
server's, through langchain-mcp-adapters) gets the model's arguments unvalidated, and
they are judged as the server behind it acts on them: by the MCP gateway's rule
(``agentguard.trace.mcp_arguments``: defaults filled in at every depth, text the server
would convert or decode refused). A structured answer (``response_format``) is turned
into data the same way (:func:`answer_value`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._langchain_schemas import CHANGED, READERS, Arguments, Rejected
from ._langchain_values import answer_value, plain_value, problem_of


def tool_arguments(tool: Any, args: Mapping[str, Any]) -> Arguments:
    """A model's arguments as ``tool``'s model-facing schema gives them to it."""
    return READERS.of(tool).arguments(args)


def received_arguments(tool: Any, args: Mapping[str, Any], tool_call_id: str | None) -> Arguments:
    """The arguments ``tool`` will receive when LangGraph invokes it with ``args`` (the
    call's, injected values in them), injected ones left out: read as the tool reads
    them, and verified to read back to themselves (see the module)."""
    reader = READERS.of(tool)
    found = reader.received(args, tool_call_id)
    if found is not None:
        return found
    parse = getattr(tool, "_parse_input", None)
    if parse is None or reader.json is not None:  # no schema LangChain validates with
        return reader.arguments(args)
    try:  # a pydantic v1 schema, or none: the tool's own reading
        values = _parsed(parse(dict(args), tool_call_id), reader.injected)
        kept = {k: v for k, v in args.items() if k in reader.injected}
        again = _parsed(parse({**kept, **values}, tool_call_id), reader.injected)
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        return Rejected(problem_of(exc))
    return values if again == values else Rejected(CHANGED)


def _parsed(parsed: Any, injected: frozenset[str]) -> dict[str, Any]:
    if not isinstance(parsed, Mapping):  # text input: not how LangGraph calls a tool
        raise TypeError(f"the tool read its input as {type(parsed).__name__}, not arguments")
    return {str(k): plain_value(v) for k, v in parsed.items() if k not in injected}


def model_arguments(tool: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` as the model gave them: the values LangGraph injected left out."""
    injected = READERS.of(tool).injected
    return {k: v for k, v in args.items() if k not in injected}


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
    """The arguments the tool is invoked with: the ``checked`` snapshot in the form its
    schema reads (``Json`` fields as text, aliased fields under their alias), plus the
    values LangGraph injected into ``args`` (its runtime, state, store), as it injected
    them."""
    reader = READERS.of(tool)
    injected = reader.injected
    out = {k: v for k, v in args.items() if k in injected} if injected else {}
    out.update(reader.hand(checked))
    return out


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
