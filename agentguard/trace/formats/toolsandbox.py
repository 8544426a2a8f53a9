"""ToolSandbox execution contexts: the ``execution_context.json`` each scenario run writes
(``trajectories/<scenario>/execution_context.json``, ``ExecutionContext.to_dict()``).

The run is the ``SANDBOX`` table of ``_dbs``: one row per message, ordered by
``sandbox_message_index``, each with ``sender``/``recipient`` among ``SYSTEM``, ``USER``,
``AGENT``, ``EXECUTION_ENVIRONMENT``. An agent's tool call is a row ``AGENT ->
EXECUTION_ENVIRONMENT`` whose ``content`` is the Python code ToolSandbox generated for it
(``<id>_parameters = {...}`` then ``<id>_response = tool(**<id>_parameters)``), with the
agent-facing name in ``openai_function_name`` (scrambled names stay scrambled: that is
what the agent called). The answer is the ``EXECUTION_ENVIRONMENT -> AGENT`` row with the
same ``openai_tool_call_id``; a non-null ``tool_call_exception`` marks a tool error.

``USER -> AGENT`` and ``SYSTEM -> AGENT`` rows are user messages (the system's carry
``sender: "system"``), ``AGENT -> USER`` rows assistant messages. The user's own calls
(``USER -> EXECUTION_ENVIRONMENT``, ToolSandbox's ``end_conversation``) are kept as calls
and listed in ``metrics["user_tool_calls"]``, as tau2's are. Rows only the user simulator
sees (its few-shot examples, ``visible_to == ["USER"]``), the system's set-up code and the
all-null guard rows are not part of the run. The scenario is the name of the directory
holding the file; it rides along in the metrics as ``task_id``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import FINAL_ANSWER, CallLog, decode_repr
from agentguard.trace.formats.tau2 import USER_TOOL_CALLS
from agentguard.trace.model import Trace

CONTEXT_FILE: Final = "execution_context.json"
"""The file name ToolSandbox writes a scenario run's execution context under."""

_CODE: Final = re.compile(
    r"^(?P<id>.+)_parameters = (?P<args>[^\n]+)\n(?P=id)_response = (?P<name>[^(\s]+)\("
)
_USER_CODE: Final = re.compile(r"^print\(repr\((?P<name>[A-Za-z_]\w*)\((?P<args>.*)\)\)\)\s*$")


def detect(value: Any) -> bool:
    """An object with ``_dbs.SANDBOX`` (a list) and ToolSandbox's ``tool_allow_list`` key."""
    if not isinstance(value, Mapping) or "tool_allow_list" not in value:
        return False
    dbs = value.get("_dbs")
    return isinstance(dbs, Mapping) and isinstance(dbs.get("SANDBOX"), list)


def scenario_of(source: str) -> str | None:
    """The scenario a context file belongs to: the directory ToolSandbox wrote it in."""
    path = Path(source)
    if path.name != CONTEXT_FILE:  # "file:record" when read as one record of a file
        path = Path(source.rpartition(":")[0])
    return path.parent.name if path.name == CONTEXT_FILE and path.parent.name else None


def load(value: Any, source: str, final_answer: bool) -> Trace:
    rows = _rows(value, source)
    log = CallLog(source)
    users: set[int] = set()
    for row in rows:
        where = f"SANDBOX message {row.get('sandbox_message_index')}"
        sender, recipient, content = row.get("sender"), row.get("recipient"), row.get("content")
        if sender == "AGENT" and recipient == "EXECUTION_ENVIRONMENT":
            name, args = _agent_call(row, where, source)
            log.add(name, args, ref=row.get("openai_tool_call_id"), where=where)
        elif sender == "USER" and recipient == "EXECUTION_ENVIRONMENT":
            name, args = _user_call(content, where, source)
            users.add(log.add(name, args, where=where))
        elif sender == "EXECUTION_ENVIRONMENT" and recipient in ("AGENT", "USER"):
            error = row.get("tool_call_exception") is not None
            ref = row.get("openai_tool_call_id") if recipient == "AGENT" else None
            log.resolve(ref, _result(row, content), error=error)
        elif recipient == "AGENT" and sender in ("USER", "SYSTEM"):
            fields = {"sender": "system"} if sender == "SYSTEM" else {}
            log.message("user", content, **fields)
        elif sender == "AGENT" and recipient == "USER":
            log.message("assistant", content, tool_calls=0)
    if final_answer:
        answer = _final_text(rows)
        if answer is not None:
            log.final_answer(answer)
    trace = log.trace()
    metrics = {
        **trace.metrics,
        "num_tool_calls": sum(
            1
            for c in trace.calls
            if c.is_tool and c.name != FINAL_ANSWER and c.position not in users
        ),
        "task_id": scenario_of(source),
        USER_TOOL_CALLS: sorted(users),
    }
    return Trace(trace.calls, metrics)


def _rows(value: Any, source: str) -> list[Mapping[str, Any]]:
    table = value["_dbs"]["SANDBOX"]
    rows: list[Mapping[str, Any]] = []
    for index, row in enumerate(table):
        if not isinstance(row, Mapping):
            raise TraceRecordError(f"SANDBOX row {index} must be an object", source=source)
        if row.get("sender") is None and row.get("content") is None:
            continue  # ToolSandbox's all-null guard row
        if row.get("visible_to") == ["USER"]:
            continue  # the user simulator's few-shot examples
        if row.get("sender") == "SYSTEM" and row.get("recipient") == "EXECUTION_ENVIRONMENT":
            continue  # set-up code (imports), not part of the dialogue
        rows.append(row)
    return sorted(rows, key=lambda r: _index(r, source))


def _index(row: Mapping[str, Any], source: str) -> int:
    index = row.get("sandbox_message_index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise TraceRecordError(
            f"SANDBOX row without an integer sandbox_message_index: {dict(row)!r:.120}",
            source=source,
        )
    return index


def _agent_call(row: Mapping[str, Any], where: str, source: str) -> tuple[str, Any]:
    content = row.get("content")
    match = _CODE.match(content) if isinstance(content, str) else None
    if match is None:
        raise TraceRecordError(
            f"{where}: an agent call must be ToolSandbox's generated code "
            f"('<id>_parameters = {{...}}' then '<id>_response = tool(...)'), got {content!r:.120}",
            source=source,
        )
    name = row.get("openai_function_name") or match.group("name")
    args = _literal(match.group("args"), where, source)
    if not isinstance(args, dict):
        raise TraceRecordError(
            f"{where}: the call's arguments are not an object: {match.group('args')!r:.120}",
            source=source,
        )
    return str(name), args


def _user_call(content: Any, where: str, source: str) -> tuple[str, Any]:
    match = _USER_CODE.match(content) if isinstance(content, str) else None
    if match is None:
        raise TraceRecordError(
            f"{where}: a user call must be 'print(repr(tool(...)))', got {content!r:.120}",
            source=source,
        )
    args: dict[str, Any] = {}
    if match.group("args").strip():
        try:
            call = ast.parse(f"f({match.group('args')})", mode="eval").body
        except SyntaxError:
            raise TraceRecordError(
                f"{where}: unreadable user call {content!r}", source=source
            ) from None
        if not isinstance(call, ast.Call) or call.args:
            raise TraceRecordError(f"{where}: positional user call {content!r}", source=source)
        args = {
            kw.arg: _literal(ast.unparse(kw.value), where, source) for kw in call.keywords if kw.arg
        }
    return match.group("name"), args


def _result(row: Mapping[str, Any], content: Any) -> Any:
    """The tool's return value: the structured ``result`` of its ``tool_trace`` when
    ToolSandbox recorded one (a call that raised has none), else the printed text."""
    traces = row.get("tool_trace")
    if isinstance(traces, list) and len(traces) == 1 and isinstance(traces[0], str):
        try:
            trace = json.loads(traces[0])
        except ValueError:
            trace = None
        if isinstance(trace, Mapping) and "result" in trace:
            return trace["result"]
    return decode_repr(content)


def _literal(text: str, where: str, source: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise TraceRecordError(
            f"{where}: arguments are not a Python literal: {text!r:.120}", source=source
        ) from None


def _final_text(rows: list[Mapping[str, Any]]) -> str | None:
    """The agent's last message to the user, when no agent call follows it."""
    for row in reversed(rows):
        if row.get("sender") != "AGENT":
            continue
        if row.get("recipient") != "USER":
            return None
        text = row.get("content")
        return text if isinstance(text, str) and text.strip() else None
    return None
