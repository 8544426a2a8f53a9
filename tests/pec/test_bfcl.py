"""BFCL-v3 multi-turn adapter on real entries and real backends."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval not installed (pip install 'agentguard[bfcl]')")

from agentguard.pec.bfcl import (
    CATEGORIES,
    KNOWN_BROKEN,
    BfclEnvironment,
    bfcl_oracle,
    ground_truth_episode,
    held_out,
    load_all,
    load_entries,
    parse_call,
)
from agentguard.pec.episode import Episode
from agentguard.pec.labels import FailureLabel
from agentguard.trace.model import Call

ENTRIES = load_all()
ORACLE = bfcl_oracle(ENTRIES)


def test_categories_loaded() -> None:
    """The four multi-turn categories load with 200 entries each."""
    assert [len(load_entries(c)) for c in CATEGORIES] == [200, 200, 200, 200]


def test_ground_truth_executable_except_known_broken() -> None:
    """Replaying all 800 ground truths: exactly the documented broken entries fail."""
    failed = {}
    for entry in ENTRIES.values():
        scored = ORACLE.score(ground_truth_episode(entry))
        if not scored.executable:
            failed[entry.id] = scored
    assert set(failed) == set(KNOWN_BROKEN)
    assert len(failed) == 21


@pytest.mark.parametrize(
    ("entry_id", "fed", "label"),
    [
        ("multi_turn_base_153", 1, FailureLabel.STATE),
        ("multi_turn_base_173", 5, FailureLabel.SCHEMA),
        ("multi_turn_base_188", 6, FailureLabel.STATE),
        ("multi_turn_miss_func_49", 3, FailureLabel.SCHEMA),
    ],
)
def test_broken_entries_fail_where_documented(entry_id: str, fed: int, label: FailureLabel) -> None:
    """Each kind of broken entry fails at its documented call with its documented label."""
    scored = ORACLE.score(ground_truth_episode(ENTRIES[entry_id]))
    assert scored.fed == fed
    assert scored.failure is not None
    assert scored.failure.label is label


def inject(entry_id: str, depth: int, call: Call, turn: int | None = None) -> Episode:
    """The ground truth of an entry with the call at ``depth`` (1-based) replaced."""
    episode = ground_truth_episode(ENTRIES[entry_id])
    calls = list(episode.calls)
    calls[depth - 1] = call
    turns = list(episode.turns or ())
    if turn is not None:
        turns[depth - 1] = turn
    return replace(episode, calls=tuple(calls), turns=tuple(turns))


def gt_call(entry_id: str, depth: int) -> Call:
    return ground_truth_episode(ENTRIES[entry_id]).calls[depth - 1]


@pytest.mark.parametrize("depth", [1, 3, 5])
def test_injected_unknown_builtin_tool(depth: int) -> None:
    """A tool named like a Python builtin (`print`) is a schema failure at its depth."""
    scored = ORACLE.score(inject("multi_turn_base_0", depth, Call("print", {"value": "x"})))
    assert scored.fed == depth
    assert scored.failure
    assert scored.failure.label is FailureLabel.SCHEMA


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_injected_wrong_type(depth: int) -> None:
    """A string argument given as an integer is a schema failure at its depth."""
    original = gt_call("multi_turn_base_0", depth)
    key = next(k for k, v in original.args.items() if isinstance(v, str))
    bad = Call(original.name, {**original.args, key: 12345})
    scored = ORACLE.score(inject("multi_turn_base_0", depth, bad))
    assert scored.fed == depth
    assert scored.failure
    assert scored.failure.label is FailureLabel.SCHEMA
    assert "must be a str, got int 12345" in scored.failure.reason


def test_injected_held_out_tool_too_early() -> None:
    """A miss_func held-out tool moved to a turn before it is offered fails schema there."""
    entry = ENTRIES["multi_turn_miss_func_0"]
    ((tool, turn),) = held_out(entry).items()
    episode = ground_truth_episode(entry)
    depth = next(i + 1 for i, c in enumerate(episode.calls) if c.name == tool)
    early = inject(entry.id, depth, episode.calls[depth - 1], turn=turn - 1)
    scored = ORACLE.score(early)
    assert scored.fed == depth
    assert scored.failure
    assert scored.failure.label is FailureLabel.SCHEMA
    assert "not offered yet" in scored.failure.reason
    assert ORACLE.score(episode).executable


@pytest.mark.parametrize(("depth", "fed"), [(1, 1), (3, 3), (5, 5), (2, 4)])
def test_injected_corrupted_value(depth: int, fed: int) -> None:
    """A well-typed wrong value fails state-consistency where the state first refuses it.

    Corrupting ``mkdir(dir_name='temp')`` (depth 2) is itself executable; the prefix
    first breaks at depth 4, ``cd(folder='temp')``.
    """
    original = gt_call("multi_turn_base_0", depth)
    key = next(k for k, v in original.args.items() if isinstance(v, str))
    bad = Call(original.name, {**original.args, key: "no_such_thing_xyz"})
    scored = ORACLE.score(inject("multi_turn_base_0", depth, bad))
    assert scored.fed == fed
    assert scored.failure
    assert scored.failure.label is FailureLabel.STATE


def test_environment_matches_bfcl_executor() -> None:
    """Our dispatch gives BFCL's own executor results; BFCL's global cache is cleaned up."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    entry = ENTRIES["multi_turn_base_0"]
    key = "agentguard_pec_test"
    texts = [t for turn in entry.ground_truth for t in turn]
    try:
        expected, _ = multi_turn_utils.execute_multi_turn_func_call(
            texts, dict(entry.initial_config), list(entry.involved_classes), key, entry.id
        )
    finally:
        prefix = re.sub(r"[-./:]", "_", f"{key}_{entry.id}_")
        for name in [n for n in vars(multi_turn_utils) if n.startswith(prefix)]:
            delattr(multi_turn_utils, name)
    env = BfclEnvironment(ENTRIES)
    env.reset(entry.id)
    got = []
    for text in texts:
        _, result = env.execute(parse_call(text, entry))
        got.append(
            result
            if isinstance(result, str)
            else json.dumps(result)
            if isinstance(result, dict)
            else str(result)
        )
    env.close()
    assert got == expected
    assert not any(n.startswith("agentguard_pec_test") for n in vars(multi_turn_utils))


def test_positional_arguments_named() -> None:
    """`sort('final_report.pdf')` binds the positional value to the backend's parameter name."""
    entry = ENTRIES["multi_turn_miss_func_0"]
    assert parse_call("sort('final_report.pdf')", entry) == Call(
        "sort", {"file_name": "final_report.pdf"}
    )


def test_replays_are_isolated() -> None:
    """Replaying the same episode twice gives the same verdict (fresh backend state each time)."""
    episode = ground_truth_episode(ENTRIES["multi_turn_base_5"])
    assert ORACLE.score(episode) == ORACLE.score(episode)
