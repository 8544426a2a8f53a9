"""An event atom's tests on calls: running them, finding the calls worth running them on,
and naming the atom when one fails with an error.

A leaf of the evaluator (the monitor's atoms and the bulk scorer run the same tests), so
a test means the same thing offline, online and in bulk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentguard.errors import EvaluationError
from agentguard.language import ast as A
from agentguard.language.printer import format_formula
from agentguard.semantics.trace_index import TraceIndex
from agentguard.semantics.values import (
    MISSING,
    CompiledRegex,
    call_field,
    compare,
    freeze,
    unwrap_result,
)
from agentguard.trace.model import Call


def located(exc: EvaluationError, node: A.Formula, span: A.Span | None = None) -> EvaluationError:
    """``exc`` naming the atom it came from (its text, and its place in the spec if known).

    Errors that depend on data (a pattern taken from the trace) can only be found while
    evaluating; this keeps them as findable as the resolver's problems.
    """
    span = span or node.span
    where = f" at {span.source}:{span.line}:{span.column}" if span is not None else ""
    return EvaluationError(f"in `{format_formula(node)}`{where}: {exc}")


def passes(call: Call, f: A.Event, expected: list[tuple[A.Test, Any]]) -> bool:
    for test, value in expected:
        try:
            if not run_test(call_field(call, test.field.path), test, value):
                return False
        except EvaluationError as exc:
            raise located(exc, f, test.span) from None
    return True


def run_test(actual: Any, test: A.Test, expected: Any) -> bool:
    if compare(actual, test.op, expected):
        return True
    # `result = 11` also matches the paper's {"result": 11} wrapper (never for negated tests,
    # which would otherwise hold for both the wrapper and its content)
    if test.field.path == ("result",) and test.op not in ("!=", "!~"):
        inner = unwrap_result(actual)
        return inner is not MISSING and compare(inner, test.op, expected)
    return False


class EqualityIndex:
    """Per-(tool, path) maps value -> positions, built on first use, once per trace."""

    def __init__(self, idx: TraceIndex) -> None:
        self.idx = idx
        self._index: dict[tuple[str | None, tuple[str | int, ...]], dict[Any, list[int]]] = {}

    def candidates(self, f: A.Event, expected: list[tuple[A.Test, Any]]) -> Sequence[int]:
        """Positions worth testing: the tool's calls, narrowed by an equality index.

        An argument test ``key = value`` (the shape of parametric constraints such as
        ``issue_refund(order_id = o)``) looks its positions up in a per-(tool, path) index
        built once per trace, so each quantifier instance costs O(matches), not O(calls).
        """
        for test, value in expected:
            path = test.field.path
            if (
                test.op == "="
                and path
                and path[0] != "result"
                and not isinstance(value, CompiledRegex)
            ):
                key = (f.tool, path)
                index = self._index.get(key)
                if index is None:
                    index = self._build(f.tool, path)
                    self._index[key] = index
                try:
                    return index.get(freeze(value), ())
                except TypeError:  # an unhashable value: fall back to scanning
                    break
        if f.tool is None:
            return range(self.idx.n)
        return self.idx.positions.get(f.tool, ())

    def _build(self, tool: str | None, path: tuple[str | int, ...]) -> dict[Any, list[int]]:
        index: dict[Any, list[int]] = {}
        positions = range(self.idx.n) if tool is None else self.idx.positions.get(tool, ())
        calls = self.idx.trace.calls
        for i in positions:
            v = call_field(calls[i], path)
            if v is MISSING:
                continue
            try:
                index.setdefault(freeze(v), []).append(i)
            except TypeError:
                continue
        return index
