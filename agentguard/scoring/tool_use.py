"""A completed trace checked against the spec's ``tool`` declarations.

The firewall refuses a call that breaks its tool's declaration (an undeclared tool, a
missing or mistyped argument, a ``from`` value never seen, a ``requires`` that fails);
offline, the same checks are replayed call by call and reported next to the compliance
score, which they do not change (they check the tool interface, not the procedure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

from agentguard.language import ast as A
from agentguard.tools.checker import ToolChecker
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.model import Call, Trace


@dataclass(frozen=True, slots=True)
class ToolUseProblem:
    """One call of the trace that breaks its tool's declaration."""

    position: int
    tool: str
    kind: str  # schema | dependency | requires
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.position + 1,
            "tool": self.tool,
            "kind": self.kind,
            "detail": self.detail,
        }

    def __str__(self) -> str:
        return f'call #{self.position + 1} ("{self.tool}"), {self.kind}: {self.detail}'


def check_tool_use(
    trace: Trace, spec: A.Spec, *, final_tools: tuple[str, ...] = FINAL_TOOLS
) -> tuple[ToolUseProblem, ...]:
    """Replay the trace through the declarations; empty when the spec declares no tools
    (or the trace has no calls)."""
    if not spec.tools or not trace.calls:
        return ()
    checker = ToolChecker(spec.tools, implicit=final_tools)
    problems: list[ToolUseProblem] = []
    calls = trace.calls
    # a trace recorded without results (e.g. a decision log) cannot show where values came
    # from: dependency checks would only report false problems there
    sources = {
        p.source.tool
        for decl in spec.tools
        for p in decl.params
        if p.source is not None and p.source.extractor == "results"
    }
    results_known = all(c.has_result for c in calls if c.name in sources or (None in sources))
    for i, call in enumerate(calls):
        if not call.is_tool:  # a dialogue event is no tool call: nothing to declare
            continue
        for p in checker.check(call.name, call.args, _Prefix(calls, i)):
            if p.kind == "dependency" and not results_known:
                continue
            problems.append(ToolUseProblem(i, p.tool, p.kind, p.detail))
        checker.observe(call)
    return tuple(problems)


class _Prefix(Sequence[Call]):
    """The first ``n`` calls, without copying them.

    Slicing ``calls[:i]`` for every call made a replay quadratic (64k calls: 10 s); the
    checker reads the history only when a precondition has to be re-evaluated.
    """

    __slots__ = ("_calls", "_n")

    def __init__(self, calls: Sequence[Call], n: int) -> None:
        self._calls = calls
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Call: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Call]: ...
    def __getitem__(self, index: int | slice) -> Call | Sequence[Call]:
        if isinstance(index, slice):
            return tuple(self._calls[: self._n])[index]
        if not -self._n <= index < self._n:
            raise IndexError(index)
        return self._calls[index % self._n]
