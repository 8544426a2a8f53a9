"""The per-trace index built from the tool codes by sorting equals the one built call by
call: same codes, positions and tools, in the same order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Trace
from agentguard.semantics import trace_index
from agentguard.semantics.trace_index import TraceIndex


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "final_answer", "é"]), max_size=400))
def test_sorted_index_equals_the_loop(names: list[str]) -> None:
    """From records or from calls, the sorted build gives the loop's index exactly."""
    for trace in (Trace.from_records([{"tool_name": n} for n in names]), Trace.of(*names)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(trace_index, "_SORTED_FROM", 0)
            sorted_ = TraceIndex(trace)
            mp.setattr(trace_index, "_SORTED_FROM", 10**9)
            loop = TraceIndex(trace)
        assert list(sorted_.positions.items()) == list(loop.positions.items())
        assert list(sorted_._codes.items()) == list(loop._codes.items())
        assert sorted_.codes.tolist() == loop.codes.tolist()
        assert sorted_.codes.dtype == loop.codes.dtype
        for tool in ("a", "z"):
            assert sorted_.mask(tool).tolist() == loop.mask(tool).tolist()
