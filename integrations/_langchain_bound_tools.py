"""The tools bound to a LangChain model, compared with the spec's (the middleware knows
them only from the first model request, not when it is built)."""

from __future__ import annotations

from typing import Any

from agentguard.enforcement.agent_tools import (
    ToolMismatchError,
    compare_tools,
    warn_tool_mismatches,
)
from agentguard.language import ast as A


def langchain_tool_schemas(tools: Any) -> dict[str, Any]:
    """Name -> JSON Schema of the arguments, for LangChain tools (or OpenAI-format dicts)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out: dict[str, Any] = {}
    for tool in tools:
        try:
            function = convert_to_openai_tool(tool)["function"]
        except (ValueError, TypeError, KeyError):  # a provider built-in: no schema to compare
            continue
        out[str(function["name"])] = function.get("parameters")
    return out


def compare_bound_tools(spec: A.Spec, tools: Any, firewall: Any, *, strict: bool) -> None:
    """Each difference between ``spec`` and the bound ``tools`` logged in the run's log
    (``firewall.report_tool_mismatches``) and warned of (``ToolMismatchWarning``); with
    ``strict``, not warned of but raised as one :class:`ToolMismatchError` once logged
    (a strict firewall raises it itself; a factory's firewall may not be strict)."""
    schemas = langchain_tool_schemas(tools)
    final = frozenset(getattr(firewall, "final_tools", ("final_answer",)))
    compare = compare_tools if strict else warn_tool_mismatches
    found = compare(spec, schemas, implicit=final)
    report = getattr(firewall, "report_tool_mismatches", None)  # absent on stand-ins
    if report is not None:
        report(found)
    if strict and found:
        raise ToolMismatchError(found)
