"""The final tool: the call that ends a run with the agent's answer, and how calls are counted.

A leaf module (it imports nothing from the package), so the trace loaders, the language's
implicit tool, the monitor's online budget, the firewall and the benchmark all share one name
and one count: ``metrics.num_tool_calls`` is the number of calls that are not final answers,
whoever computes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Protocol

FINAL_TOOL: Final = "final_answer"
"""The name of the tool an agent calls to give its answer (smolagents' name for it)."""

FINAL_TOOLS: Final[tuple[str, ...]] = (FINAL_TOOL,)
"""The default set of tools that end a run; the firewall's ``final_tools`` default."""


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def is_tool(self) -> bool: ...


def count_tool_calls(calls: Iterable[_Named], final_tools: Iterable[str] = FINAL_TOOLS) -> int:
    """``metrics.num_tool_calls`` of ``calls``: every tool call except the final answers
    (dialogue events are positions of the trace, not tool calls)."""
    final = frozenset(final_tools)
    return sum(1 for c in calls if c.is_tool and c.name not in final)


__all__ = ["FINAL_TOOL", "FINAL_TOOLS", "count_tool_calls"]
