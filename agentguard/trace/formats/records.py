"""The AgentLTL paper's own shapes: the metrics record ``μ`` (Appendix B; its
``tool_calls`` list is the trace) and a bare list of ``{tool_name, arguments,
tool_result}`` call records (Appendix A.1.2).

These formats have no final answer of their own: a ``final_answer`` record is read
like any other call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.trace.formats._base import mappings
from agentguard.trace.model import Trace

_NAME_KEYS = ("tool_name", "name", "tool")


def detect_metrics(value: Any) -> bool:
    """An object with a ``tool_calls`` list and no chat ``role``."""
    # (dict, Mapping): a dict, what JSON gives, is told without the ABC's slower check
    return isinstance(value, (dict, Mapping)) and "tool_calls" in value and "role" not in value


def load_metrics(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    return Trace.from_metrics(value, source=source)


def detect_records(value: Any) -> bool:
    """A list of objects, some naming a tool (``tool_name``, ``name`` or ``tool``); the
    loader names any record that does not."""
    return mappings(value) and any(any(k in r for k in _NAME_KEYS) for r in value)


def load_records(value: Any, source: str, final_answer: bool) -> Trace:  # noqa: ARG001
    return Trace.from_records(value, source=source)
