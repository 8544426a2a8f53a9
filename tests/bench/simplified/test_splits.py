"""Table 2's held-out splits and E.3's round-robin training order."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

import agentguard
from agentguard.bench.cli import main
from agentguard.bench.errors import BadParameterError
from agentguard.bench.instance import Instance
from agentguard.bench.simplified import (
    HELD_OUT_FIRST_SEED,
    HELD_OUT_TEMPLATES,
    SPLIT_SIZES,
    SPLITS,
    TRAINING_TEMPLATES,
    generate_simplified,
    round_robin,
    training_set,
    validation_split,
)

PARAMS = ("variant", "s", "j", "threshold", "k", "K", "target", "augmentation")


def key(inst: Instance) -> tuple[object, ...]:
    """What makes two instances the same problem: template, parameters, augmentation."""
    return (inst.template, *(inst.params[p] for p in PARAMS))


@pytest.fixture(scope="module")
def splits() -> dict[str, list[Instance]]:
    return {s: validation_split(s) for s in SPLITS}


def test_sizes_are_table_2s(splits: dict[str, list[Instance]]) -> None:
    """83 unaugmented, 100 augmented, 39 unseen-pattern, 39 diverse-tool by default."""
    assert {s: len(v) for s, v in splits.items()} == {
        "unaugmented": 83,
        "augmented": 100,
        "unseen-pattern": 39,
        "diverse-tool": 39,
    }
    assert dict(SPLIT_SIZES) == {s: len(v) for s, v in splits.items()}


def test_no_split_repeats_a_training_problem(splits: dict[str, list[Instance]]) -> None:
    """Held-out seeds give parameter sets the 300 training examples never have."""
    seen = {key(i) for i in training_set()}
    for split, instances in splits.items():
        assert all(i.seed >= HELD_OUT_FIRST_SEED for i in instances)
        assert len({i.id for i in instances}) == len(instances), split
        assert not seen & {key(i) for i in instances}, split


def test_patterns_and_augmentations(splits: dict[str, list[Instance]]) -> None:
    """Unseen-pattern holds only the two excluded templates; the others only trained ones,
    every one of them; augmented adds a prefix or suffix call, the others none."""
    assert {i.template for i in splits["unseen-pattern"]} == set(HELD_OUT_TEMPLATES)
    for split in ("unaugmented", "augmented", "diverse-tool"):
        assert {i.template for i in splits[split]} == set(TRAINING_TEMPLATES)
    augmentations = Counter(i.params["augmentation"] for i in splits["augmented"])
    assert set(augmentations) == {"prefix", "suffix", "both"}
    for split in ("unaugmented", "unseen-pattern", "diverse-tool"):
        assert {i.params["augmentation"] for i in splits[split]} == {"none"}


def test_diverse_tool_renames_every_tool(splits: dict[str, list[Instance]]) -> None:
    """No generic tool name is shown; the problem and its answer are the renamed base one,
    and the gold trace still scores 1.0 on the renamed spec."""
    generic = {"tool_a", "tool_b", "tool_c", "tool_d"}
    for inst in splits["diverse-tool"]:
        assert not generic & set(inst.tools)
        assert {c.name for c in inst.gold_trace} <= set(inst.tools)
        base = generate_simplified(inst.template, inst.seed, variant=inst.params["variant"])
        assert inst.expected_answer == base.expected_answer
        assert [inst.aliases[c.name]["tool"] for c in inst.gold_trace] == [
            c.name for c in base.gold_trace
        ]
        report = agentguard.verify_trace(inst.trace(), agentguard.parse_spec(inst.spec_text))
        assert report.score == 1.0


def test_unseen_patterns_use_the_training_tool_names(splits: dict[str, list[Instance]]) -> None:
    """Unseen-pattern keeps the training tool set (a, b, c), unrenamed."""
    for inst in splits["unseen-pattern"]:
        assert set(inst.tools) <= {"tool_a", "tool_b", "tool_c"}
        assert not inst.aliases


def test_a_split_is_a_prefix_of_a_longer_one() -> None:
    """``size`` takes the first instances: a small evaluation is the big one's start."""
    assert [i.id for i in validation_split("diverse-tool", 5)] == [
        i.id for i in validation_split("diverse-tool")[:5]
    ]
    assert validation_split("augmented", 0) == []


def test_bad_split_or_size() -> None:
    """An unknown split or a negative size is a BadParameterError naming the choices."""
    with pytest.raises(BadParameterError, match="unseen-pattern"):
        validation_split("unseen-tools")  # type: ignore[arg-type]
    with pytest.raises(BadParameterError, match="non-negative"):
        validation_split("augmented", -1)


def test_round_robin_never_repeats_a_template_in_a_row() -> None:
    """The 300 in E.3's order: a permutation, no template twice running, each template's
    own order kept."""
    given = training_set()
    ordered = round_robin(given)
    assert sorted(i.id for i in ordered) == sorted(i.id for i in given)
    assert all(a.template != b.template for a, b in itertools.pairwise(ordered))
    for name in TRAINING_TEMPLATES:
        assert [i.id for i in ordered if i.template == name] == [
            i.id for i in given if i.template == name
        ]
    assert [i.template for i in ordered[:15]] == list(TRAINING_TEMPLATES)


def test_round_robin_ends_with_what_is_left() -> None:
    """Once one template alone has instances left, they follow one another."""
    a = [generate_simplified("loop_termination", s) for s in range(3)]
    b = [generate_simplified("branch_selection", 0)]
    assert [i.template for i in round_robin(a + b)] == [
        "loop_termination",
        "branch_selection",
        "loop_termination",
        "loop_termination",
    ]


def test_cli_writes_a_held_out_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bench generate --mode simplified-heldout --split diverse-tool --size 3` writes the
    split's first three instances and their specs."""
    out = tmp_path / "held"
    argv = ["bench", "generate", "--mode", "simplified-heldout", "--split", "diverse-tool"]
    assert main([*argv, "--size", "3", "--out", str(out), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["written"]
    expected = validation_split("diverse-tool", 3)
    assert written == [i.id for i in expected]
    for inst in expected:
        loaded = Instance.load(out / f"{inst.id}.json")
        assert loaded.tools == inst.tools
        assert loaded.gold_records() == inst.gold_records()
        assert (out / f"{inst.id}.ltl").read_text(encoding="utf-8") == inst.spec_text
