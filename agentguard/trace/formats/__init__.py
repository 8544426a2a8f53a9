"""Trace formats: each recorded-run shape agentguard reads, and the detector that picks
one by shape (or by name, when told).

Detection, in order: an object is an agentguard report (``decisions`` + ``compliance``),
a metrics record (``tool_calls``, no ``role``), a tau-bench result item (``traj`` +
``task_id`` + ``reward``), a tau2 simulation (``messages`` + ``task_id`` +
``reward_info``/``termination_reason``), an AgentDojo run file (``messages`` +
``suite_name`` + ``user_task_id``), a ToolSandbox execution context (``_dbs.SANDBOX`` +
``tool_allow_list``), or an envelope (``messages``,
``request``/``response``, ``choices``, ``input``/``output``, ``steps``) whose inner list
is then detected. A list is, first match wins: agentguard decision-log events, MCP
JSON-RPC messages (``tools/call``), smolagents
steps, Claude Code transcript entries, OpenAI Responses items, Anthropic messages (``tool_use``/``tool_result`` blocks), Gemini contents (``parts``),
OpenAI chat messages (``role``), LangChain messages (``type`` ai/human/tool...), call
records (``tool_name``/``name``/``tool``). An empty list is an empty trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.formats import (
    agentdojo,
    agentguard_logs,
    anthropic,
    claude_code,
    gemini,
    langchain,
    mcp,
    openai_chat,
    openai_responses,
    records,
    smolagents,
    tau2,
    tau_bench,
    toolsandbox,
)
from agentguard.trace.formats._base import FINAL_ANSWER, TOOL_ERRORS, TraceFormat, mappings
from agentguard.trace.formats.wrappers import unwrap
from agentguard.trace.model import Trace

OBJECT_FORMATS: Final = (
    TraceFormat(
        "agentguard-report",
        "FirewallReport.to_dict(): the executed decisions",
        agentguard_logs.detect_report,
        agentguard_logs.load_report,
    ),
    TraceFormat(
        "metrics",
        "AgentLTL metrics record {tool_calls: [...], ...}",
        records.detect_metrics,
        records.load_metrics,
    ),
    TraceFormat(
        "tau-bench",
        "tau-bench result item {task_id, reward, info, traj, trial}",
        tau_bench.detect,
        tau_bench.load,
    ),
    TraceFormat(
        "tau2",
        "tau2 simulation {task_id, trial, messages, reward_info, ...}",
        tau2.detect,
        tau2.load,
    ),
    TraceFormat(
        "agentdojo",
        "AgentDojo run file {suite_name, user_task_id, injection_task_id, messages, ...}",
        agentdojo.detect,
        agentdojo.load,
    ),
    TraceFormat(
        "toolsandbox",
        "ToolSandbox execution_context.json {_dbs: {SANDBOX: [...], ...}, tool_allow_list, ...}",
        toolsandbox.detect,
        toolsandbox.load,
    ),
)
"""Formats whose record is one JSON object."""

LIST_FORMATS: Final = (
    TraceFormat(
        "agentguard-log",
        "agentguard decision-log events (JSON lines)",
        agentguard_logs.detect_log,
        agentguard_logs.load_log,
    ),
    TraceFormat(
        "mcp",
        "MCP JSON-RPC messages (tools/call requests and their responses)",
        mcp.detect,
        mcp.load,
    ),
    TraceFormat(
        "smolagents",
        "smolagents agent.memory.get_full_steps()",
        smolagents.detect,
        smolagents.load,
    ),
    TraceFormat(
        "claude-code",
        "Claude Code session transcript entries (JSON lines)",
        claude_code.detect,
        claude_code.load,
    ),
    TraceFormat(
        "openai-responses",
        "OpenAI Responses API items (function_call / function_call_output)",
        openai_responses.detect,
        openai_responses.load,
    ),
    TraceFormat(
        "anthropic",
        "Anthropic Messages (tool_use / tool_result blocks)",
        anthropic.detect,
        anthropic.load,
    ),
    TraceFormat(
        "gemini",
        "Google Gemini contents (functionCall / functionResponse parts)",
        gemini.detect,
        gemini.load,
    ),
    TraceFormat(
        "openai-chat",
        "OpenAI Chat Completions messages (tool_calls / tool replies)",
        openai_chat.detect,
        openai_chat.load,
    ),
    TraceFormat(
        "langchain",
        "LangChain/LangGraph messages (messages_to_dict, model_dump, dumpd)",
        langchain.detect,
        langchain.load,
    ),
    TraceFormat(
        "records",
        "list of {tool_name, arguments, tool_result} records",
        records.detect_records,
        records.load_records,
    ),
)
"""Formats whose record is a list (possibly inside an envelope object)."""

FORMATS: Final = {f.name: f for f in (*OBJECT_FORMATS, *LIST_FORMATS)}
"""Every format by name, in detection order."""


def format_names() -> tuple[str, ...]:
    """The names ``format=`` (and ``agentguard check --format``) accepts."""
    return tuple(FORMATS)


def detect_format(value: Any) -> str | None:
    """The name of the first format whose shape fits ``value`` (None when none does)."""
    for fmt in OBJECT_FORMATS:
        if fmt.detect(value):
            return fmt.name
    inner = unwrap(value)
    if inner is not None:
        value = inner
    if isinstance(value, list) and not value:
        return "records"
    for fmt in LIST_FORMATS:
        if fmt.detect(value):
            return fmt.name
    return None


def parse(
    value: Any, *, source: str, format: str | None = None, final_answer: bool = True
) -> tuple[Trace, str]:
    """Read one record into a Trace; returns it with the name of the format used.

    ``format`` skips detection. ``final_answer`` turns a run's closing text answer into
    a ``final_answer(answer=...)`` call, for formats that record the answer as text.
    """
    name = format if format is not None else detect_format(value)
    if name is None:
        raise TraceRecordError(_no_fit(value), source=source)
    fmt = FORMATS.get(name)
    if fmt is None:
        raise TraceRecordError(
            f"unknown trace format {name!r}; known: {', '.join(FORMATS)}", source=source
        )
    if fmt not in OBJECT_FORMATS:
        inner = unwrap(value)
        value = inner if inner is not None else value
        if not mappings(value) or isinstance(value, Mapping):
            raise TraceRecordError(
                f"format {name!r} expects a list of objects, got {_describe(value)}",
                source=source,
            )
    elif not isinstance(value, Mapping):
        raise TraceRecordError(
            f"format {name!r} expects a JSON object, got {_describe(value)}", source=source
        )
    if format is not None and value != [] and not fmt.detect(value):
        # a forced format that does not fit reads nothing: an empty trace that would score
        # FULL. Forcing chooses among the formats that fit; it never bypasses the shape.
        raise TraceRecordError(_misfit(fmt, value), source=source)
    return fmt.load(value, source, final_answer), name


def fits(value: Any, name: str) -> bool:
    """Whether ``value`` (or the list inside its envelope) has the shape of format ``name``."""
    fmt = FORMATS.get(name)
    if fmt is None:
        return False
    if fmt in OBJECT_FORMATS:
        return fmt.detect(value)
    inner = unwrap(value)
    return fmt.detect(inner if inner is not None else value)


def _misfit(fmt: TraceFormat, value: Any) -> str:
    detected = detect_format(value)
    hint = f"; it reads as {detected!r} (drop --format to detect it)" if detected else ""
    return f"forced format {fmt.name!r} ({fmt.summary}) does not fit {_describe(value)}{hint}"


def _no_fit(value: Any) -> str:
    hint = ""
    if agentguard_logs.is_event(value):
        hint = " (this is one decision-log event: load the whole log file)"
    return (
        f"no known trace format fits {_describe(value)}{hint}; known formats: "
        f"{', '.join(FORMATS)} (name one with format=... / --format)"
    )


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        keys = ", ".join(sorted(map(str, value))[:8])
        return f"an object with keys [{keys}]"
    if isinstance(value, list):
        first = value[0] if value else None
        if isinstance(first, Mapping):
            keys = ", ".join(sorted(map(str, first))[:8])
            return f"a list of {len(value)} items (first has keys [{keys}])"
        return f"a list of {len(value)} items (first is {type(first).__name__})"
    return f"a JSON {type(value).__name__}"


__all__ = [
    "FINAL_ANSWER",
    "FORMATS",
    "TOOL_ERRORS",
    "TraceFormat",
    "detect_format",
    "fits",
    "format_names",
    "parse",
]
