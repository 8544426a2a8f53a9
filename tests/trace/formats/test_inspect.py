"""Inspect AI eval logs: one trace per sample, tool errors from the reply's ``error``."""

from __future__ import annotations

from agentguard.trace.loaders import load_traces
from tests.trace.formats.conftest import FIXTURES


def test_each_sample_is_a_trace_with_its_tool_errors() -> None:
    """Samples load in order; ``function`` named calls join replies; an ``error`` reply is marked."""
    first, second = load_traces(FIXTURES / "inspect_eval_log.json")
    assert (first.record, second.record) == (1, 2)
    assert first.trace is not None and second.trace is not None
    t = first.trace
    assert t.names == ("lookup_order", "issue_refund", "final_answer")
    assert t[0].result == {"order_id": "A1", "total": 42.5}
    assert t[1].args == {"order_id": "A1", "amount": 10}
    assert t[1].result == "refunds are disabled" and t.tool_errors == {1}
    assert second.trace.names == ("final_answer",)
