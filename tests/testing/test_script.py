"""agentguard.testing.script: the framework-free player every scripted model steps with."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.testing import ScriptedCall, ScriptExhaustedError, call, call_with_id, if_observed
from agentguard.testing.script import ScriptPlayer, content_text


def test_steps_play_in_order_and_the_observations_are_kept() -> None:
    """Each turn is the next step; what the model saw before it is recorded, in order."""
    player: ScriptPlayer[str] = ScriptPlayer(["one", "two"])
    assert [player.next_turn("saw 1"), player.next_turn("saw 2")] == ["one", "two"]
    assert player.position == 2
    assert player.observations == ["saw 1", "saw 2"]


def test_a_reaction_chooses_from_what_was_seen() -> None:
    """if_observed takes its first branch when the text was seen (any case), else the other."""
    player: ScriptPlayer[str] = ScriptPlayer([if_observed("BLOCKED", "fix", "go on")] * 2)
    assert player.next_turn("the call was blocked") == "fix"
    assert player.next_turn("ok") == "go on"


def test_running_out_raises_and_records_nothing() -> None:
    """A turn past the end is a ScriptExhaustedError naming the script's length."""
    player: ScriptPlayer[str] = ScriptPlayer(["only"])
    player.next_turn("")
    with pytest.raises(ScriptExhaustedError, match="1 steps"):
        player.next_turn("more?")
    assert player.observations == [""]


def test_the_script_can_be_replaced_between_turns() -> None:
    """Reassigning script and position (a test adding steps to a running agent) takes effect."""
    player: ScriptPlayer[str] = ScriptPlayer([])
    player.script = ["late"]
    player.position = 0
    assert player.next_turn("") == "late"


def test_calls_get_their_scripted_id_or_a_fresh_one() -> None:
    """A call keeps the id it was scripted with; others are numbered call_1, call_2, ..."""
    player: ScriptPlayer[object] = ScriptPlayer([])
    turn = [call("a"), call_with_id("X", "b"), call("c")]
    assert [(i, c.name) for i, c in player.with_ids(turn)] == [
        ("call_1", "a"),
        ("X", "b"),
        ("call_2", "c"),
    ]
    assert player.with_ids(call("d")) == [("call_3", ScriptedCall("d"))]


@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=6))
def test_players_sharing_a_counter_never_repeat_an_id(turn_sizes: list[int]) -> None:
    """Two models numbering from one counter (agents that hand off) give distinct ids."""
    ids = itertools.count(1)
    players: list[ScriptPlayer[object]] = [ScriptPlayer([], ids=ids), ScriptPlayer([], ids=ids)]
    seen = [
        call_id
        for n, size in enumerate(turn_sizes)
        for call_id, _ in players[n % 2].with_ids([call("t")] * size)
    ]
    assert len(seen) == len(set(seen)) == sum(turn_sizes)


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        ([{"type": "text", "text": "a"}, {"type": "image"}, "skipped", {"text": "b"}], "a\n\nb"),
        (None, ""),
        (42, "42"),
    ],
)
def test_content_text_flattens_message_content(content: object, text: str) -> None:
    """A string as is; a list's dict parts' text joined by lines; None empty; else str()."""
    assert content_text(content) == text
