"""Every shipped spec lints clean, passes its good trace and fails its bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard import load_spec, load_traces, verify_trace

SPECS = ["refund", "filesystem_safety", "appendix_b_fanout", "code_qa", "tau2_airline"]


@pytest.mark.parametrize("name", SPECS)
def test_pass_trace_is_fully_compliant(specs_dir: Path, name: str) -> None:
    """The shipped passing trace scores 1.0."""
    spec = load_spec(specs_dir / f"{name}.ltl")
    (loaded,) = load_traces(specs_dir / "traces" / f"{name}.pass.json", messages=True)
    assert loaded.trace is not None
    report = verify_trace(loaded.trace, spec)
    assert report.label == "FULL", report.to_dict()


@pytest.mark.parametrize("name", SPECS)
def test_fail_trace_violates(specs_dir: Path, name: str) -> None:
    """The shipped failing trace violates at least two constraints."""
    spec = load_spec(specs_dir / f"{name}.ltl")
    (loaded,) = load_traces(specs_dir / "traces" / f"{name}.fail.json", messages=True)
    assert loaded.trace is not None
    report = verify_trace(loaded.trace, spec)
    assert len(report.violated) >= 2, report.to_dict()


def test_tau2_airline_runs_are_tau2_files_and_rewarded(specs_dir: Path) -> None:
    """The airline traces are tau2 results files; the passing one has reward 1 and its
    failure is the conversation (no "yes", talking while booking), not the database."""
    spec = load_spec(specs_dir / "tau2_airline.ltl")
    (good,) = load_traces(specs_dir / "traces" / "tau2_airline.pass.json", messages=True)
    (bad,) = load_traces(specs_dir / "traces" / "tau2_airline.fail.json", messages=True)
    assert good.format == bad.format == "tau2" and good.trace and bad.trace
    assert good.trace.metrics["reward"] == 1.0
    failed = {c.name for c in verify_trace(bad.trace, spec).violated}
    assert failed == {
        "confirm_before_write",
        "details_listed_before_confirmation",
        "no_talking_while_calling",
    }
