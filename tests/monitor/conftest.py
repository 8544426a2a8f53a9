"""Fixtures of the monitor tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentguard.monitor import machine
from agentguard.monitor.compiled import clear_cache


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A state budget of 2, on machines compiled for this test only (compiled machines are
    shared, and a too-large mark is for good)."""
    clear_cache()
    monkeypatch.setattr(machine, "MAX_EXPLORE", 2)
    yield
    clear_cache()
