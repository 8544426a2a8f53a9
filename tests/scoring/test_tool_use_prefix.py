"""The replay's history view behaves exactly like the slice it replaces."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.scoring.tool_use import _Prefix
from agentguard.trace.model import Call


@given(st.integers(0, 8), st.integers(0, 8), st.integers(-10, 10))
def test_prefix_view_equals_the_slice(size: int, n: int, index: int) -> None:
    """Length, items, negative indexes, slices and iteration match ``calls[:n]``."""
    calls = tuple(Call(f"t{i}", position=i) for i in range(size))
    n = min(n, size)
    view, expected = _Prefix(calls, n), calls[:n]
    assert len(view) == len(expected) and tuple(view) == expected
    assert tuple(view[1:]) == expected[1:]
    if -n <= index < n:
        assert view[index] == expected[index]
    else:
        with pytest.raises(IndexError):
            view[index]
