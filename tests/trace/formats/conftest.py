"""Fixture files recorded from real runs (see tests/trace/fixtures/generate.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent.parent / "fixtures"


def fixture(name: str) -> Any:
    """The parsed JSON of one fixture file."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))
