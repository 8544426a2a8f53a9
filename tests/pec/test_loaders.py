"""Episode JSON Lines: good records scored, bad ones reported by file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.errors import TraceError, TraceRecordError
from agentguard.pec.episode import NO_TOOL
from agentguard.pec.labels import FailureLabel
from agentguard.pec.loaders import episode_from_json, episode_to_json, load_episodes


def write(path: Path, *lines: object) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


GOOD = {
    "task_id": "t1",
    "method": "react",
    "labels": {"model": "m"},
    "success": True,
    "calls": [
        {"tool_name": "a", "arguments": {"x": 1}, "tool_result": "ok", "executable": True},
        {"tool_name": "b", "arguments": {}, "executable": False, "failure": "dependency"},
    ],
}


def test_bad_records_named_and_good_kept(tmp_path: Path) -> None:
    """A file with broken lines yields the good episodes and one error per bad line."""
    f = write(tmp_path / "eps.jsonl", GOOD, "{not json", {"task_id": "t2"}, "", GOOD)
    loaded = load_episodes(f)
    errors = [x.error for x in loaded if x.error]
    assert [x.record for x in loaded] == [1, 2, 3, 5]
    assert [str(e).split(": ")[0] for e in errors] == [f"{f}:2", f"{f}:3"]
    assert "success" in str(errors[1])
    assert sum(1 for x in loaded if x.scored) == 2


def test_per_call_flags_fix_fed_and_label() -> None:
    """The first `executable: false` call fixes FED; its `failure` is the primary label."""
    episode, scored = episode_from_json(GOOD)
    assert scored is not None
    assert scored.fed == 2
    assert scored.failure is not None
    assert scored.failure.label is FailureLabel.DEPENDENCY
    assert episode.labels == {"method": "react", "model": "m"}


def test_record_without_executability_needs_an_oracle() -> None:
    """Without `fed` or flags the episode loads but has no verdict yet."""
    episode, scored = episode_from_json({"task_id": 3, "success": 0, "calls": [{"tool_name": "a"}]})
    assert scored is None
    assert episode.task_id == "3"
    assert not episode.success


def test_no_tool_episode_scored_from_task_rule() -> None:
    """An episode without calls is the T=1 terminal action: executable iff no-tool is allowed."""
    episode, scored = episode_from_json({"task_id": "a", "success": False, "calls": []})
    assert episode.actions[0].name == NO_TOOL
    assert episode.horizon == 1
    assert scored is not None
    assert scored.fed == 1
    assert scored.failure is not None
    assert scored.failure.label is FailureLabel.PRECONDITION
    _, ok = episode_from_json({"task_id": "a", "success": True, "no_tool_allowed": True})
    assert ok is not None
    assert ok.executable


def test_fed_out_of_range_is_a_record_error(tmp_path: Path) -> None:
    """`fed` beyond T+1 is reported against its line."""
    f = write(
        tmp_path / "e.jsonl",
        {"task_id": "a", "success": True, "fed": 9, "calls": [{"tool_name": "a"}]},
    )
    (only,) = load_episodes(f)
    assert only.error is not None
    assert "outside 1..T+1" in str(only.error)


def test_metrics_record_calls_accepted() -> None:
    """An agentguard metrics record (`trace` with `tool_calls`) supplies the calls."""
    record = {
        "task_id": "a",
        "success": True,
        "fed": 2,
        "trace": {"tool_calls": [{"tool_name": "x", "arguments": '{"k": 1}'}]},
    }
    episode, scored = episode_from_json(record)
    assert episode.calls[0].args == {"k": 1}
    assert scored is not None
    assert scored.executable


def test_round_trip(tmp_path: Path) -> None:
    """episode_to_json output loads back to an equal scored episode."""
    _, scored = episode_from_json(GOOD)
    assert scored is not None
    f = write(tmp_path / "rt.jsonl", episode_to_json(scored))
    (again,) = load_episodes(f)
    assert again.scored is not None
    assert again.scored.fed == scored.fed
    assert again.scored.episode.calls == scored.episode.calls


def test_unreadable_file() -> None:
    """A missing file raises TraceError with the path."""
    with pytest.raises(TraceError, match="cannot read"):
        load_episodes("/nonexistent/eps.jsonl")


def test_unknown_label_rejected() -> None:
    """An unknown failure label is a record error listing the five labels."""
    with pytest.raises(TraceError, match="schema, dependency"):
        episode_from_json({**GOOD, "fed": 1, "failure": "vibes"})


def test_user_calls_round_trip() -> None:
    """Episodes with user calls survive the JSON Lines round trip; a bad placement is named."""
    from agentguard.trace.model import Call as _Call

    episode, _ = episode_from_json(
        {
            "task_id": "t",
            "success": True,
            "calls": [{"tool_name": "a"}],
            "user_calls": [{"before": 1, "tool_name": "toggle_airplane_mode", "arguments": {}}],
        }
    )
    assert episode.user_calls == ((1, _Call("toggle_airplane_mode", {})),)
    again, _ = episode_from_json(episode_to_json(episode))
    assert again == episode
    with pytest.raises(TraceRecordError, match="before"):
        episode_from_json(
            {"task_id": "t", "success": True, "user_calls": [{"before": 3, "tool_name": "x"}]}
        )
