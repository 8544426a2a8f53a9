"""Shared fixtures: the repository root and the shipped specs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator
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


# In CI (CI=true) a test never skips for want of a package or a program: .ci/run installs
# everything the tests use, so a skip there means an install step is missing. Turn every
# skip (collection-time importorskip included) into a failure that says what was missing.
_STRICT_SKIPS = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _skip_reason(longrepr: object) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    outcome = yield
    report = outcome.get_result()
    if _STRICT_SKIPS and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped in CI (CI=true), which installs everything: {_skip_reason(report.longrepr)}"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None]:
    outcome = yield
    report = outcome.get_result()
    if _STRICT_SKIPS and report.skipped:
        report.outcome = "failed"
        report.longrepr = (
            f"skipped in CI (CI=true), which installs everything: {_skip_reason(report.longrepr)}"
        )


@pytest.fixture(scope="session")
def toolsandbox_python() -> str:
    """The python of ToolSandbox's own environment (tests/pec, tests/trace drive it).

    ``$AGENTGUARD_TOOLSANDBOX_PYTHON``, else ``.ci-tsb-venv``, built here by
    ``.ci/toolsandbox-env`` when missing (once per clone; .ci/run builds it first), so the
    README's test command needs nothing more. A build that fails fails the test, never
    skips it (docs/pec.md, 'ToolSandbox').
    """
    named = os.environ.get("AGENTGUARD_TOOLSANDBOX_PYTHON")
    if named:
        if not Path(named).is_file():
            pytest.fail(f"AGENTGUARD_TOOLSANDBOX_PYTHON={named} is not a file")
        return named
    built = subprocess.run(  # idempotent: returns at once when the stamp matches
        ["bash", str(ROOT / ".ci" / "toolsandbox-env")],
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    python = built.stdout.strip().splitlines()[-1] if built.stdout.strip() else ""
    if built.returncode != 0 or not Path(python).is_file():
        pytest.fail(f"ToolSandbox's environment could not be built: {built.stderr[-2000:]}")
    return python
