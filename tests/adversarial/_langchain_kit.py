"""What the LangChain adversarial tests share: tools that report exactly what they were
handed, and the two invariants every scenario ends on (the trace is what ran; the online
report equals ``verify_trace`` of the exported trace and of the decision log read back,
and what ``agentguard check --json`` prints for the log)."""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentguard.enforcement.report import FirewallReport
from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.trace.final_tool import FINAL_TOOL
from tests.integrations._offline import assert_online_is_offline
from tests.seams.test_online_offline import assert_online_equals_offline

Ran = list[tuple[str, dict[str, Any]]]
"""What the tools really received, in the order they ran: ``(tool, arguments)``."""


def spec_file(tmp_path: Path, text: str) -> tuple[Spec, Path]:
    """The spec parsed, and written where ``agentguard check`` can read it."""
    path = tmp_path / "spec.ltl"
    path.write_text(text)
    return parse_spec(text), path


def executed(report: FirewallReport) -> Ran:
    """The tool calls the trace says ran (final answers and dialogue events left out)."""
    return [(c.name, dict(c.args)) for c in report.trace if c.is_tool and c.name != FINAL_TOOL]


def assert_invariants(
    report: FirewallReport | None,
    spec: tuple[Spec, Path],
    ran: Sequence[tuple[str, dict[str, Any]]],
    where: Path,
    capsys: pytest.CaptureFixture[str] | None = None,
    *,
    parallel: bool = False,
) -> FirewallReport:
    """The trace is exactly what ran (names and the very arguments the tools received, in
    order; calls that ran ``parallel`` in any order), and the run scores the same online
    and offline."""
    assert report is not None
    if parallel:
        assert sorted(map(repr, executed(report))) == sorted(map(repr, ran))
    else:
        assert executed(report) == list(ran)
    assert_online_equals_offline(report, spec[0], where)
    if capsys is not None and report.log_path is not None:
        assert_online_is_offline(spec[1], report, Path(report.log_path), capsys)
    return report


def log_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def saver_to_file(saver: Any, path: Path) -> None:
    """An ``InMemorySaver``'s checkpoints in a file, for another process to continue from."""
    storage = {t: {ns: dict(c) for ns, c in d.items()} for t, d in saver.storage.items()}
    path.write_bytes(pickle.dumps((storage, dict(saver.writes), dict(saver.blobs))))


def saver_from_file(path: Path) -> Any:
    """The ``InMemorySaver`` :func:`saver_to_file` wrote."""
    from langgraph.checkpoint.memory import InMemorySaver

    storage, writes, blobs = pickle.loads(path.read_bytes())
    saver = InMemorySaver()
    for thread, namespaces in storage.items():
        for namespace, checkpoints in namespaces.items():
            saver.storage[thread][namespace].update(checkpoints)
    saver.writes.update(writes)
    saver.blobs.update(blobs)
    return saver


__all__ = [
    "Ran",
    "assert_invariants",
    "executed",
    "log_lines",
    "saver_from_file",
    "saver_to_file",
    "spec_file",
]
