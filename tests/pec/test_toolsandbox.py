"""The ToolSandbox adapter on the real ToolSandbox (its own environment, across a process
boundary): ground truths, injected faults at their true depth, minefields, scrambled
names, run directories in `pec`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentguard.cli.main import main
from agentguard.pec.episode import Episode
from agentguard.pec.errors import ReplayError
from agentguard.pec.labels import FailureLabel
from agentguard.pec.loaders import load_episodes
from agentguard.pec.toolsandbox_env import (
    MINEFIELD,
    ToolSandboxWorker,
    call_sequence_gap,
    ground_truth_episode,
    toolsandbox_oracles,
)
from agentguard.pec.toolsandbox_files import iter_toolsandbox
from agentguard.trace.model import Call

RUN = Path(__file__).resolve().parents[1] / "trace" / "fixtures" / "toolsandbox" / "run"
SEND = "send_message_with_contact_content_cellular_off"
FREDRIK = {"phone_number": "+12453344098", "content": "How's the new album coming along"}
FREDRIK_ID = "9e137f06-916a-5310-8174-cf0b7e9f7054"

EXPECTED_FIXTURES = {
    # scenario: (T, FED, label, success)
    "get_wifi": (1, 2, None, True),
    "get_wifi_3_distraction_tools_tool_name_scrambled": (1, 2, None, True),
    "remove_contact_by_phone": (3, 1, FailureLabel.STATE, True),
    SEND: (4, 2, FailureLabel.STATE, True),
    f"{SEND}_insufficient_information": (3, 3, FailureLabel.STATE, False),
}
"""The fixture runs (generate.py): the paper's Table C.1 repair fails at 1 and recovers;
the send before cellular is on fails at 2; sending anyway reaches the minefield at 3."""


def _score(worker: ToolSandboxWorker, scenario: str, *calls: Call) -> tuple[int, object]:
    episode = Episode(scenario, calls, True, {"dataset": "toolsandbox"})
    scored = toolsandbox_oracles(worker)(episode).score(episode)
    return scored.fed, scored.failure


def test_fixture_runs_replay_at_their_recorded_depths(
    toolsandbox_worker: ToolSandboxWorker,
) -> None:
    """Each fixture run replays to the FED and label its recorded outcome shows."""
    oracle_for = toolsandbox_oracles(toolsandbox_worker)
    loaded = list(iter_toolsandbox(RUN))
    assert {item.episode.task_id for item in loaded if item.episode} == set(EXPECTED_FIXTURES)
    for item in loaded:
        assert item.episode is not None, item.error
        horizon, fed, label, success = EXPECTED_FIXTURES[item.episode.task_id]
        scored = oracle_for(item.episode).score(item.episode)
        assert (item.episode.horizon, scored.fed, item.episode.success) == (horizon, fed, success)
        assert (scored.failure.label if scored.failure else None) == label


def test_minefield_reached_is_the_first_error(toolsandbox_worker: ToolSandboxWorker) -> None:
    """Sending in the insufficient-information scenario reaches its minefield: a failure there."""
    fed, failure = _score(
        toolsandbox_worker,
        f"{SEND}_insufficient_information",
        Call("get_cellular_service_status", {}),
        Call("send_message_with_phone_number", FREDRIK),
    )
    assert fed == 2
    assert failure is not None and MINEFIELD in failure.reason  # type: ignore[attr-defined]


def test_state_dependency_executable_and_deleted_precondition(
    toolsandbox_worker: ToolSandboxWorker,
) -> None:
    """Turning cellular on before sending is executable; deleting that call fails the send."""
    search = Call("search_contacts", {"name": "Fredrik Thordendal"})
    on = Call("set_cellular_service_status", {"on": True})
    send = Call("send_message_with_phone_number", FREDRIK)
    assert _score(toolsandbox_worker, SEND, search, on, send) == (4, None)
    fed, failure = _score(toolsandbox_worker, SEND, search, send)
    assert fed == 2
    assert failure.label is FailureLabel.STATE  # type: ignore[attr-defined]
    assert "Cellular service is not enabled" in failure.reason  # type: ignore[attr-defined]


def test_wrong_argument_unknown_tool_and_wrong_type(toolsandbox_worker: ToolSandboxWorker) -> None:
    """A wrong id fails in the state; an unknown tool and a mistyped argument fail the schema."""
    search = Call("search_contacts", {"phone_number": "+12453344098"})
    remove = Call("remove_contact", {"person_id": FREDRIK_ID})
    scenario = "remove_contact_by_phone"
    assert _score(toolsandbox_worker, scenario, search, remove) == (3, None)
    fed, failure = _score(
        toolsandbox_worker, scenario, search, Call("remove_contact", {"person_id": "+12453344098"})
    )
    assert (fed, failure.label) == (2, FailureLabel.STATE)  # type: ignore[attr-defined]
    fed, failure = _score(
        toolsandbox_worker, scenario, search, Call("delete_contact", {"person_id": FREDRIK_ID})
    )
    assert (fed, failure.label) == (2, FailureLabel.SCHEMA)  # type: ignore[attr-defined]
    fed, failure = _score(
        toolsandbox_worker, scenario, search, Call("remove_contact", {"person_id": 7})
    )
    assert (fed, failure.label) == (2, FailureLabel.SCHEMA)  # type: ignore[attr-defined]


def test_scrambled_names_are_the_agents_tools(toolsandbox_worker: ToolSandboxWorker) -> None:
    """With scrambled tool names the agent's `setting_4` runs; the real name is unknown to it."""
    scenario = "get_wifi_3_distraction_tools_tool_name_scrambled"
    assert _score(toolsandbox_worker, scenario, Call("setting_4", {})) == (2, None)
    fed, failure = _score(toolsandbox_worker, scenario, Call("get_wifi_status", {}))
    assert (fed, failure.label) == (1, FailureLabel.SCHEMA)  # type: ignore[attr-defined]


def test_ground_truth_fills_arguments_from_earlier_results(
    toolsandbox_worker: ToolSandboxWorker,
) -> None:
    """find_days_till_holiday: timestamp_diff takes both timestamps from the earlier calls."""
    episode = ground_truth_episode(toolsandbox_worker, "find_days_till_holiday")
    names = [c.name for c in episode.calls]
    assert (
        names[-2:] == ["timestamp_diff", "timestamp_to_datetime_info"] or "timestamp_diff" in names
    )
    diff = next(c for c in episode.calls if c.name == "timestamp_diff")
    assert set(diff.args) == {"timestamp_0", "timestamp_1"}
    scored = toolsandbox_oracles(toolsandbox_worker)(episode).score(episode)
    assert scored.executable, scored.failure


def test_ground_truth_census(toolsandbox_worker: ToolSandboxWorker) -> None:
    """Every offline scenario with a call sequence replays executable, except the ones whose
    milestone leaves a search call's arguments open (ToolSandbox refuses a search with no
    criteria), each at the depth of that call; the others are listed with the reason."""
    scenarios = toolsandbox_worker.scenarios()
    oracle_for = toolsandbox_oracles(toolsandbox_worker)
    gaps: dict[str, int] = {}
    replayed = executable = 0
    for name, info in scenarios.items():
        gap = call_sequence_gap(info)
        if gap is not None:
            key = gap.split(":")[0].split(" (")[0]
            gaps[key] = gaps.get(key, 0) + 1
            continue
        try:
            episode = ground_truth_episode(toolsandbox_worker, name)
        except ReplayError:
            gaps["its milestones name no call"] = gaps.get("its milestones name no call", 0) + 1
            continue
        replayed += 1
        scored = oracle_for(episode).score(episode)
        if scored.executable:
            executable += 1
            continue
        call = episode.calls[scored.fed - 1]
        assert call.args == {}, (name, scored.failure)
        assert scored.failure is not None and "No search criteria" in scored.failure.reason
    assert len(scenarios) == 1032
    assert gaps == {
        "milestones constrain a database without naming a call": 392,
        "its task needs RapidAPI": 304,
        "no milestone": 128,
        "its milestones name no call": 16,
    }
    assert (replayed, executable) == (192, 88)


def test_evaluation_matches_the_summary(toolsandbox_worker: ToolSandboxWorker) -> None:
    """ToolSandbox's evaluation of a recorded context equals what result_summary.json says."""
    summary = json.loads((RUN / "result_summary.json").read_text())["per_scenario_results"]
    for row in summary:
        file = RUN / "trajectories" / row["name"] / "execution_context.json"
        got = toolsandbox_worker.evaluate(file, row["name"])
        assert got.similarity == pytest.approx(row["similarity"])


def test_run_without_summary_needs_toolsandbox(tmp_path: Path, toolsandbox_python: str) -> None:
    """Without result_summary.json a run is an error record, unless ToolSandbox evaluates it."""
    run = tmp_path / "agent_scripted_user_scripted_12_03_2026_19_41_00"
    shutil.copytree(RUN / "trajectories", run / "trajectories")
    loaded = load_episodes(run)
    assert all(item.error is not None and "--toolsandbox" in str(item.error) for item in loaded)
    out = tmp_path / "episodes.jsonl"
    code = main(
        [
            "pec",
            str(run),
            "--toolsandbox",
            "--toolsandbox-python",
            toolsandbox_python,
            "--json",
            "--resamples",
            "100",
            "--episodes",
            str(out),
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["task_id"]: r["success"] for r in rows} == {
        name: expected[3] for name, expected in EXPECTED_FIXTURES.items()
    }
    assert {r["labels"]["model"] for r in rows} == {"scripted"}


def test_pec_cli_toolsandbox_table(
    capsys: pytest.CaptureFixture[str], toolsandbox_python: str
) -> None:
    """`pec RUN --toolsandbox --json`: the Table-2 row of the fixture runs."""
    code = main(
        [
            "pec",
            str(RUN),
            "--toolsandbox",
            "--toolsandbox-python",
            toolsandbox_python,
            "--json",
            "--resamples",
            "100",
        ]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    (group,) = payload["groups"]
    assert group["n"] == 5
    assert group["ter"] == pytest.approx(2 / 5)
    assert group["final_success"] == pytest.approx(4 / 5)
    assert group["rr_eligible"] == 3


def test_pec_recorded_reads_runs_without_toolsandbox(capsys: pytest.CaptureFixture[str]) -> None:
    """`pec RUN --recorded`: ToolSandbox's own files, judged by their recorded tool errors."""
    assert main(["pec", str(RUN), "--recorded", "--json", "--resamples", "100"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["groups"]
    assert group["rr_eligible"] == 2  # the two recorded exceptions; the minefield is unseen


def test_a_silent_worker_is_an_error_in_bounded_time(tmp_path: Path) -> None:
    """A python that never answers: a ReplayError after the timeout, not a hang."""
    sleeper = tmp_path / "python"
    sleeper.write_text("#!/bin/sh\nexec sleep 60\n")
    sleeper.chmod(0o755)
    with (
        ToolSandboxWorker(str(sleeper), timeout=0.5) as worker,
        pytest.raises(ReplayError, match=r"no answer to 'scenarios' in 0\.5 s"),
    ):
        worker.scenarios()


def test_a_worker_that_dies_says_why(tmp_path: Path) -> None:
    """A python that exits at once: the error carries its last words (stderr)."""
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'No module named tool_sandbox' >&2\nexit 1\n")
    broken.chmod(0o755)
    with (
        ToolSandboxWorker(str(broken)) as worker,
        pytest.raises(ReplayError, match="No module named tool_sandbox"),
    ):
        worker.scenarios()


def test_missing_toolsandbox_python_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ToolSandbox environment named: exit 2, saying how to name one."""
    monkeypatch.delenv("AGENTGUARD_TOOLSANDBOX_PYTHON", raising=False)
    assert main(["pec", str(RUN), "--toolsandbox"]) == 2
    assert "--toolsandbox-python" in capsys.readouterr().err
