"""Grouping, per-dataset pairing, the progress bar and trace-to-episode conversion."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agentguard.pec.cli_replay import replay_serial
from agentguard.pec.declarations import declarations_from_params
from agentguard.pec.episode import Episode, Scored, episode_from_trace
from agentguard.pec.errors import PecError
from agentguard.pec.oracle import Oracle
from agentguard.pec.report import build_report
from agentguard.trace.model import Call, Trace
from tests.pec.helpers import scored


def test_datasets_split_groups_and_resamples() -> None:
    """Episodes of two datasets get `dataset` prepended to the key and separate bootstraps."""
    eps = [
        scored(f"t{i}", 3, 4 if i % 2 else 2, True, dataset=d, method="m")
        for d in ("bfcl", "toolsandbox")
        for i in range(10)
    ]
    report = build_report(eps, ["method"], resamples=200)
    assert report.by == ("dataset", "method")
    assert [g.key for g in report.groups] == [("bfcl", "m"), ("toolsandbox", "m")]
    assert report.groups[0].summary.ter == 0.5


def test_report_dict_has_table_columns() -> None:
    """to_dict carries the Table 2 columns, PEC@k with n_k, Eq. 12 terms and labels."""
    eps = [scored("a", 2, 3, True, method="x"), scored("b", 2, 1, False, method="x")]
    group = build_report(eps, resamples=100).to_dict()["groups"][0]
    assert group["rr"] == 0.0
    assert group["rr_ci"][0] == 0.0
    assert group["pec_at"]["1"]["n_k"] == 2
    assert group["pec_at"]["3"]["pec"] == 0.0
    assert group["decomposition"]["uninterrupted"] == 0.5
    assert group["labels"]["schema"] == 1


def test_rr_undefined_reported_as_none() -> None:
    """With no failed episode RR and its interval are None, not 0."""
    group = build_report([scored("a", 1, 2, True)], resamples=50).to_dict()["groups"][0]
    assert group["rr"] is None
    assert group["rr_ci"] is None


def test_empty_report_is_an_error() -> None:
    """No scored episodes: PecError."""
    with pytest.raises(PecError):
        build_report([])


def test_progress_bar_on_long_replays() -> None:
    """Replaying 60 episodes on a terminal shows a progress bar and scores them all."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=80)
    oracle = Oracle.build(tools=declarations_from_params({"a": []}))
    pending = [(f"f:{i}", Episode(str(i), (Call("a"),), True)) for i in range(60)]
    errors: list[Exception] = []
    out: list[tuple[Scored, str]] = replay_serial(oracle, pending, console, errors, quiet=False)
    assert len(out) == 60
    assert all(s.executable for s, _ in out)
    assert [where for _, where in out] == [where for where, _ in pending]
    assert "replaying" in buffer.getvalue()


def test_episode_from_run_trace() -> None:
    """A run trace becomes an episode; the final_answer call is not a tool action."""
    trace = Trace.of("search", Call("final_answer", {"answer": 1}))
    episode = episode_from_trace(trace, task_id="t", success=True, labels={"method": "fw"})
    assert episode.horizon == 1
    assert episode.calls[0].name == "search"
    assert episode.label("method") == "fw"
