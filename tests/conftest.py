"""Shared fixtures: the repository root and the shipped specs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentguard._recursion import LIMIT

# agentguard raises the process-wide recursion limit the first time a deep stage runs and
# never lowers it; raising it before any test keeps Hypothesis (which checks that a test
# left the limit as it found it) from seeing the change happen inside a test.
sys.setrecursionlimit(max(sys.getrecursionlimit(), LIMIT))

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def specs_dir() -> Path:
    return ROOT / "specs"
