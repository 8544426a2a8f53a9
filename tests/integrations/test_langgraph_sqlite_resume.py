"""A LangGraph run resumed from a sqlite checkpoint, in new processes, has the trace of
the same run uninterrupted: online (the middleware's) and from the decision log. Each
user and assistant message enters it once, whoever resumes (issue: resuming in a new
process put the user's message and the interrupted turn's assistant message in twice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph.checkpoint.sqlite")

from agentguard import load_traces
from tests.integrations._langgraph_resume import STEPS, play

ROOT = Path(__file__).resolve().parents[2]


def _from_log(log: Path) -> list[list[Any]]:
    (loaded,) = load_traces(log, messages=True)
    assert loaded.trace is not None, loaded.error
    return [[c.name, dict(c.args)] for c in loaded.trace]


def _baseline(folder: Path) -> list[list[Any]]:
    """The run without interruptions (the approver answers at once)."""
    folder.mkdir()
    return play(folder / "cp.sqlite", folder / "d.jsonl", [0, 2], interrupts=False)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, STEPS - 1), unique=True, max_size=3))
def test_resumed_runs_have_the_uninterrupted_trace(
    tmp_path_factory: pytest.TempPathFactory, ask: list[int]
) -> None:
    """Property over random interrupt points: each phase with fresh objects over the
    same sqlite file (as a new process has) gives the uninterrupted run's trace, and so
    does its log."""
    folder = tmp_path_factory.mktemp("resume")
    baseline = _baseline(folder / "base")
    names = [name for name, _ in baseline]
    assert names.count("user_message") == 1 and names.count("step") == STEPS
    db, log = folder / "cp.sqlite", folder / "d.jsonl"
    assert play(db, log, ask) == baseline
    assert _from_log(log) == baseline


def test_resumed_in_new_processes(tmp_path: Path) -> None:
    """The same, each phase in a process of its own."""
    baseline = _baseline(tmp_path / "base")
    db, log = tmp_path / "cp.sqlite", tmp_path / "d.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.integrations._langgraph_resume", str(db), str(log)]
    first = True
    for _ in range(STEPS + 1):
        done = subprocess.run(
            [*command, "1", "3", *(["--first"] if first else [])],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.strip().splitlines()[-1])
        first = False
        if not out["interrupted"]:
            break
    assert out["trace"] == baseline
    assert _from_log(log) == baseline


def test_a_fork_of_an_older_checkpoint_cannot_roll_the_run_back(tmp_path: Path) -> None:
    """Found from outside: an interrupted (unfinished) thread forked at a checkpoint from
    before a call ran, in a fresh middleware: the call ran a second time under "at most
    once", the report said once, and the log read back merged the two. The middleware
    continues a checkpoint older than the log only when every call that ran since is in
    the conversation it resumes (it records those again); a fork's is not: refused, and
    nothing runs."""
    from langchain_core.messages import HumanMessage

    from agentguard.enforcement.firewall import FirewallStateError
    from tests.integrations._langgraph_resume import THREAD, agent

    db, log = tmp_path / "cp.sqlite", tmp_path / "d.jsonl"
    graph, _ = agent(db, log, [2], interrupts=True)

    out = graph.invoke({"messages": [HumanMessage("do the steps")]}, THREAD)
    assert out.get("__interrupt__")  # steps 0 and 1 ran; step 2 waits for a human
    history = list(graph.get_state_history(THREAD))
    early = next(
        c for c in history if c.next == ("model",) and len(c.values["messages"]) == 1
    )  # before the first model call: nothing had run
    fork, _ = agent(db, log, [2], interrupts=True)
    with pytest.raises(FirewallStateError, match="went on"):
        fork.invoke(None, early.config)
    (loaded,) = load_traces(log, messages=True)
    assert loaded.trace is not None
    assert [c.args["n"] for c in loaded.trace if c.name == "step"] == [0, 1]
