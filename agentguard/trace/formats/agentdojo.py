"""AgentDojo run files: one task run as AgentDojo's ``TraceLogger`` writes it
(``<logdir>/<pipeline>/<suite>/<user_task>/<attack>/<injection_task or none>.json``).

The file is one object: ``suite_name``, ``pipeline_name``, ``user_task_id``,
``injection_task_id``, ``attack_type``, ``injections``, ``messages``, ``error``,
``utility``, ``security`` and the logger's context (``benchmark_version``,
``duration``, ...). Its ``messages`` are AgentDojo's own chat messages
(``agentdojo.types``): content is a list of blocks ``{"type": "text", "content": ...}``
(a plain string in files written before agentdojo 0.1.30); an assistant message's
``tool_calls`` are ``FunctionCall`` dumps ``{"function": name, "args": {...}, "id",
"placeholder_args"}``; a ``tool`` message carries its result as text, ``error`` (the
runtime's ``"Type: message"``, or null) and ``tool_call``, the call that was executed.

Read as:

* a ``user`` message is a ``user_message`` dialogue event, an ``assistant`` message an
  ``assistant_message`` (its ``text`` blocks joined; thinking blocks are not text);
* each executed call is a call, in the order its ``tool`` message answers it, with the
  arguments of its ``tool_call`` (what ran; the assistant's request otherwise), joined by
  id, else by name, oldest first. A call no ``tool`` message answers never ran (the run
  ended at AgentDojo's iteration limit) and is left out; so is a call the runtime
  refused before running it (an unknown tool, arguments that failed its schema:
  :func:`never_ran`) and a call agentguard refused (its refusal marker,
  :mod:`agentguard.trace.refusal`);
* a result is decoded as AgentDojo rendered it (``tool_result_to_str``): YAML for a model
  or a list, ``str()`` for anything else; :func:`result_value` undoes exactly that and
  leaves any other text as it is. A result with an ``error`` is a tool error whose result
  is the error text;
* the final answer is the last message when it is an assistant message with text and no
  tool call (an assistant message that is agentguard's refusal is no answer).

The run's labels ride in the metrics: ``task_id`` (``suite/user_task`` or
``suite/user_task/injection_task``), ``suite_name``, ``user_task_id``,
``injection_task_id``, ``attack_type``, ``pipeline_name`` (the model),
``benchmark_version``, and AgentDojo's verdicts ``utility`` and ``security`` (true when
the injection task succeeded, in AgentDojo's sense).
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats._base import CallLog, arguments_of, list_at, mappings
from agentguard.trace.model import Trace
from agentguard.trace.refusal import is_refusal
from agentguard.trace.yaml_text import NOT_YAML, dump_yaml, load_yaml

CALL_KEYS: Final = frozenset({"function", "args", "id", "placeholder_args"})
"""The keys of an AgentDojo ``FunctionCall`` dump."""

LABELS: Final = (
    "suite_name",
    "user_task_id",
    "injection_task_id",
    "attack_type",
    "pipeline_name",
    "benchmark_version",
    "utility",
    "security",
)
"""The run's fields carried into the trace's metrics, under their AgentDojo names."""

INVALID_TOOL: Final = "Invalid tool {name} provided."
EMPTY_NAME: Final = "Empty function name provided. Provide a valid function name."
NOT_FOUND: Final = "ToolNotFoundError: The requested function `{name}` is not available."
"""How agentdojo 0.1.35 answers a call to a tool the runtime lacks (``ToolsExecutor``,
``FunctionsRuntime.run_function``): the tool never ran."""
_SCHEMA: Final = re.compile(r"ValidationError: \d+ validation errors? for Input schema for `(.*)`")
"""The first line of the runtime's answer to arguments that fail the tool's schema
(``Function.parameters`` is the model ``Input schema for `name```, validated before the
function is called): the tool never ran."""


def detect(value: Any) -> bool:
    """An object with ``messages``, ``suite_name`` and ``user_task_id``."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("messages"), list)
        and "suite_name" in value
        and "user_task_id" in value
    )


def load(value: Any, source: str, final_answer: bool) -> Trace:
    messages = value.get("messages")
    if not isinstance(messages, list) or not mappings(messages):
        raise TraceRecordError(
            "an AgentDojo run needs 'messages' (a list of objects)", source=source
        )
    trace = read_messages(messages, source=source, final_answer=final_answer)
    return Trace(trace.calls, {**trace.metrics, **run_labels(value)})


def run_labels(run: Mapping[str, Any]) -> dict[str, Any]:
    """The run's ``task_id`` and its AgentDojo labels (see the module docstring)."""
    out = {key: run[key] for key in LABELS if key in run}
    parts = [run.get("suite_name"), run.get("user_task_id"), run.get("injection_task_id")]
    out["task_id"] = "/".join(str(p) for p in parts if p not in (None, ""))
    return out


def read_messages(
    messages: Sequence[Mapping[str, Any]], *, source: str, final_answer: bool = False
) -> Trace:
    """The dialogue events and executed calls of AgentDojo chat messages, in order."""
    log = CallLog(source)
    asked: list[tuple[str, dict[str, Any], Any]] = []  # calls not answered yet
    for index, msg in enumerate(messages):
        role, where = msg.get("role"), f"message {index}"
        if role == "user":
            text = message_text(msg.get("content"))
            if text is not None and not is_refusal(text):
                log.message("user", text, tool_calls=0)
        elif role == "assistant":
            calls = list_at(msg, "tool_calls", where, source)
            text = message_text(msg.get("content")) or ""
            if not calls and is_refusal(text):
                continue  # agentguard's note (a stopped run, a refused answer)
            log.message("assistant", text, tool_calls=len(calls))
            asked.extend(_asked(call, where, source) for call in calls)
        elif role == "tool":
            _answer(log, asked, msg, where)
    if final_answer:
        answer = final_text(messages)
        if answer is not None:
            log.final_answer(answer)
    return log.trace()


def _asked(call: Any, where: str, source: str) -> tuple[str, dict[str, Any], Any]:
    """``(name, args, id)`` of one requested call; its arguments are read (and refused if
    they cannot be) even if it never runs."""
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), str):
        raise TraceRecordError(f"{where}: a tool call needs a 'function' name", source=source)
    return call["function"], arguments_of(call, "args", CALL_KEYS, where, source), call.get("id")


def _answer(
    log: CallLog, asked: list[tuple[str, dict[str, Any], Any]], msg: Mapping[str, Any], where: str
) -> None:
    """A ``tool`` message: the call it answers enters the trace with its result, unless it
    never ran."""
    executed = msg.get("tool_call")
    name = executed.get("function") if isinstance(executed, Mapping) else None
    ref = msg.get("tool_call_id")
    if ref is None and isinstance(executed, Mapping):
        ref = executed.get("id")
    slot = _match(asked, ref, name)
    if slot is None:
        raise TraceRecordError(
            f"{where}: a tool result answers no call asked for", source=log.source
        )
    asked_name, args, _ = asked.pop(slot)
    if isinstance(executed, Mapping) and isinstance(name, str):
        args = arguments_of(executed, "args", CALL_KEYS, f"{where} tool_call", log.source)
    else:
        name = asked_name
    error, text = msg.get("error"), message_text(msg.get("content"))
    if is_refusal(error) or is_refusal(text):
        return  # agentguard refused it: it never ran
    if isinstance(error, str) and error:
        if never_ran(error, name):
            return
        log.set_result(log.add(name, args, where=where), error, error=True)
        return
    log.set_result(log.add(name, args, where=where), result_value(text or ""))


def _match(asked: list[tuple[str, dict[str, Any], Any]], ref: Any, name: Any) -> int | None:
    """The requested call a result answers: by id, else the oldest of that name, else the
    oldest."""
    if ref is not None:
        for slot, (_, _, call_id) in enumerate(asked):
            if call_id == ref:
                return slot
    for slot, (asked_name, _, _) in enumerate(asked):
        if asked_name == name:
            return slot
    return 0 if asked else None


def never_ran(error: str, name: str) -> bool:
    """Whether ``error`` is AgentDojo's answer to a call it refused before running it: an
    unknown or empty tool name, or arguments that failed the tool's schema."""
    if error in (INVALID_TOOL.format(name=name), EMPTY_NAME, NOT_FOUND.format(name=name)):
        return True
    first = _SCHEMA.fullmatch(error.split("\n", 1)[0])
    return first is not None and first.group(1) == name


def message_text(content: Any) -> str | None:
    """A message's text: its ``text`` blocks joined by newlines (as AgentDojo joins them),
    a plain string as it is; None when there is none."""
    if isinstance(content, str) or content is None:
        return content
    if not isinstance(content, list):
        return None
    texts = [
        block["content"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("content"), str)
    ]
    return "\n".join(texts) if texts else None


def final_text(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The last message's text when it is an assistant answer with no tool call."""
    if not messages:
        return None
    last = messages[-1]
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    text = message_text(last.get("content"))
    if not isinstance(text, str) or not text.strip() or is_refusal(text):
        return None
    return text


def result_value(text: str) -> Any:
    """The value AgentDojo rendered as ``text`` (``tool_result_to_str``), or ``text``.

    ``tool_result_to_str`` writes a pydantic model or a list as ``yaml.safe_dump(...)``
    (stripped) and anything else as ``str(value)``. So ``text`` is decoded only when it is
    exactly what one of the two makes of the decoded value: the YAML of a mapping or a list
    (:func:`~agentguard.trace.yaml_text.load_yaml`, bounded, dumped back and compared), or
    the ``repr`` of a Python dict, list or tuple (``ast.literal_eval``, compared with
    ``str``). Any other text (a file's content, a message) stays text, however it parses;
    a text that is exactly such a rendering is decoded whatever returned it (a tool whose
    text is the one line ``key: value`` cannot be told from one returning that mapping).
    Dates and times are the text the YAML holds (``2024-05-15 10:00:00``).
    """
    if text[:1] in ("{", "[", "("):
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = None
        if isinstance(value, (dict, list, tuple)) and str(value) == text:
            return value
    value = load_yaml(text, timestamps=True)
    if value is NOT_YAML or not isinstance(value, (dict, list)):
        return text
    try:
        same = dump_yaml(value).strip() == text
    except Exception:  # noqa: BLE001 - what PyYAML cannot dump back is not its dump
        return text
    return _dates_as_text(value) if same else text


def _dates_as_text(value: Any) -> Any:
    """``value`` with each date and time as PyYAML writes it (``load_yaml`` bounded the
    depth)."""
    if isinstance(value, dt.datetime):
        return value.isoformat(" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _dates_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(v) for v in value]
    return value


__all__ = [
    "CALL_KEYS",
    "LABELS",
    "detect",
    "final_text",
    "load",
    "message_text",
    "never_ran",
    "read_messages",
    "result_value",
    "run_labels",
]
