"""The AgentDojo fixtures are real runs: their generator, run again, writes the same runs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentguard.trace import load_traces
from agentguard.trace.model import Trace
from tests.trace.formats.conftest import FIXTURES

pytest.importorskip("agentdojo")

AGENTDOJO = FIXTURES / "agentdojo"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentdojo_generate", AGENTDOJO / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stable(trace: Trace) -> list[tuple[str, Any, Any]]:
    """The calls, with the one value a run makes up: the time stamp of an email it sends
    (AgentDojo's inbox stamps it with the clock)."""
    out = []
    for call in trace:
        result = call.result
        if call.name == "send_email" and isinstance(result, dict):
            result = {**result, "timestamp": "<sent now>"}
        out.append((call.name, dict(call.args), result))
    return out


def test_the_generator_writes_the_committed_runs(tmp_path: Path) -> None:
    """Every committed run file comes back from AgentDojo's runner with the same trace,
    labels and verdicts (the files themselves differ only in the time stamp of a sent
    email and in what the installed pydantic writes into an error message)."""
    written = generator().generate(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in AGENTDOJO.glob("*.json"))
    for path in written:
        committed = AGENTDOJO / path.name
        (fresh,) = load_traces(path, messages=True)
        (kept,) = load_traces(committed, messages=True)
        assert fresh.error is None and kept.error is None
        assert fresh.trace is not None and kept.trace is not None
        assert stable(fresh.trace) == stable(kept.trace), path.name
        assert fresh.trace.metrics == kept.trace.metrics, path.name
        ours, theirs = json.loads(path.read_text()), json.loads(committed.read_text())
        for key in ("suite_name", "user_task_id", "injection_task_id", "utility", "security"):
            assert ours[key] == theirs[key], (path.name, key)
