"""Every shipped spec lints clean, passes its good trace and fails its bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard import load_spec, load_traces, verify_trace

SPECS = ["refund", "filesystem_safety", "appendix_b_fanout", "code_qa"]


@pytest.mark.parametrize("name", SPECS)
def test_pass_trace_is_fully_compliant(specs_dir: Path, name: str) -> None:
    """The shipped passing trace scores 1.0."""
    spec = load_spec(specs_dir / f"{name}.ltl")
    (loaded,) = load_traces(specs_dir / "traces" / f"{name}.pass.json")
    assert loaded.trace is not None
    report = verify_trace(loaded.trace, spec)
    assert report.label == "FULL", report.to_dict()


@pytest.mark.parametrize("name", SPECS)
def test_fail_trace_violates(specs_dir: Path, name: str) -> None:
    """The shipped failing trace violates at least two constraints."""
    spec = load_spec(specs_dir / f"{name}.ltl")
    (loaded,) = load_traces(specs_dir / "traces" / f"{name}.fail.json")
    assert loaded.trace is not None
    report = verify_trace(loaded.trace, spec)
    assert len(report.violated) >= 2, report.to_dict()
