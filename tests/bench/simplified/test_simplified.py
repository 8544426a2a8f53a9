"""Simplified mode: Table 12's templates, D.3 augmentation and sampling, D.4 aliases."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentguard
from agentguard.bench.agent import perfect_factory
from agentguard.bench.errors import BadParameterError, UnknownTemplateError
from agentguard.bench.generate import instance_to_json
from agentguard.bench.instance import Instance
from agentguard.bench.runner import run_instance
from agentguard.bench.simplified import (
    HELD_OUT_TEMPLATES,
    SIMPLIFIED_TEMPLATES,
    TRAINING_TEMPLATES,
    difficulty_from_calls,
    generate_simplified,
    random_vocab,
    training_pool,
    training_set,
)
from agentguard.bench.simplified.vocab import ALIAS_POOL, ALIAS_POOL_SIZES, Vocab
from agentguard.bench.tools import TOOL_INFOS, Toolbox


def score(inst: Instance) -> float:
    return float(agentguard.verify_trace(inst.trace(), agentguard.parse_spec(inst.spec_text)).score)


def test_seventeen_templates_fifteen_for_training() -> None:
    """17 simplified templates: 15 train, loop_termination and branch_selection held out."""
    assert len(SIMPLIFIED_TEMPLATES) == 17
    assert len(TRAINING_TEMPLATES) == 15
    assert HELD_OUT_TEMPLATES == ("loop_termination", "branch_selection")
    transform = [n for n, t in SIMPLIFIED_TEMPLATES.items() if t.transform]
    assert transform == [
        "nested_loops_fixed_2x2",
        "filter_then_process",
        "fanout_then_transform",
        "branch_then_reprocess",
    ]


def test_four_tool_pool_and_lengths() -> None:
    """Simplified traces use only tool_a..tool_d, 3-7 core calls; held-out ones 3-6 on a/b/c."""
    for name, tpl in SIMPLIFIED_TEMPLATES.items():
        for seed in range(40):
            for variant in ("a", "c") if tpl.transform else ("a",):
                inst = generate_simplified(name, seed, variant=variant)
                assert {c.name for c in inst.gold_trace} <= {"tool_a", "tool_b", "tool_c", "tool_d"}
                assert 3 <= inst.num_tool_calls_expected <= (6 if tpl.held_out else 7)
                if tpl.held_out:
                    assert set(inst.tools) <= {"tool_a", "tool_b", "tool_c"}


def test_transform_variant_swaps_tool_a_for_tool_c() -> None:
    """Variant 'c' performs the seed transform with tool_c instead of tool_a."""
    a = generate_simplified("nested_loops_fixed_2x2", 3, variant="a")
    c = generate_simplified("nested_loops_fixed_2x2", 3, variant="c")
    assert [g.name for g in a.gold_trace[:2]] == ["tool_a", "tool_a"]
    assert [g.name for g in c.gold_trace[:2]] == ["tool_c", "tool_c"]
    with pytest.raises(BadParameterError):
        generate_simplified("chain_then_branch", 3, variant="c")


def test_augmentation_adds_independent_tool_a() -> None:
    """prefix/suffix add tool_a(pre in 1000-9999) first / tool_a(suf in 10000-19999) last,
    and their results are added to the answer."""
    core = generate_simplified("three_call_branch_bridge", 5)
    both = generate_simplified("three_call_branch_bridge", 5, augmentation="both")
    first, last = both.gold_trace[0], both.gold_trace[-1]
    assert first.name == last.name == "tool_a"
    assert 1000 <= first.args["i"] <= 9999
    assert 10000 <= last.args["i"] <= 19999
    assert both.expected_answer == (
        core.expected_answer + first.result["result"] + last.result["result"]
    )
    assert "addend" in both.prompt
    assert both.num_tool_calls_expected == core.num_tool_calls_expected + 2


def test_long_cores_only_take_prefix() -> None:
    """A 7-call core cannot take a suffix (8-call hard cap)."""
    with pytest.raises(BadParameterError):
        generate_simplified("nested_loops_fixed_2x2", 1, augmentation="suffix")
    assert (
        generate_simplified(
            "nested_loops_fixed_2x2", 1, augmentation="prefix"
        ).num_tool_calls_expected
        == 8
    )


def test_difficulty_from_calls() -> None:
    """C.5's post-hoc difficulty: <=5 D1, <=15 D2, <=30 D3, <=60 D4, else D5."""
    assert [difficulty_from_calls(n) for n in (3, 5, 6, 15, 16, 30, 60, 61)] == [
        1,
        1,
        2,
        2,
        3,
        3,
        4,
        5,
    ]


def test_pool_and_training_set_balance() -> None:
    """19 slots x 30 cores = 570; the 300-example set gives 20 per template, all tags used."""
    pool = list(training_pool())
    assert len(pool) == 570
    chosen = training_set()
    assert len(chosen) == 300
    assert set(Counter(i.template for i in chosen).values()) == {20}
    assert set(Counter(str(i.params["augmentation"]) for i in chosen)) == {
        "none",
        "prefix",
        "suffix",
        "both",
    }
    assert max(i.num_tool_calls_expected for i in chosen) <= 8


def test_gold_scores_one_on_pool() -> None:
    """Every pool instance's gold trace scores 1.0 on its own spec."""
    for inst in training_pool(cores_per_slot=6):
        assert score(inst) == 1.0, inst.id


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(SIMPLIFIED_TEMPLATES)), st.integers(0, 10_000), st.integers(0, 10_000))
def test_aliases_keep_compliance_and_arithmetic(name: str, seed: int, alias_seed: int) -> None:
    """Under aliases the gold trace still scores 1.0 and the answer does not change."""
    vocab = random_vocab(alias_seed, SIMPLIFIED_TEMPLATES[name].tools)
    plain = generate_simplified(name, seed)
    aliased = generate_simplified(name, seed, vocab=vocab)
    assert aliased.expected_answer == plain.expected_answer
    assert [c.name for c in aliased.gold_trace] == [vocab.t(c.name) for c in plain.gold_trace]
    assert "tool_" not in aliased.prompt
    assert score(aliased) == 1.0


def test_aliased_tools_run_and_round_trip(tmp_path: Path) -> None:
    """Aliased instances reload from JSON and run through the toolbox under their names."""
    name = "fan_out_fan_in"
    inst = generate_simplified(
        name, 9, augmentation="prefix", vocab=random_vocab(1, SIMPLIFIED_TEMPLATES[name].tools)
    )
    path = tmp_path / "i.json"
    path.write_text(instance_to_json(inst))
    again = Instance.load(path)
    assert again == inst
    box = Toolbox(again.seed, again.difficulty, again.tools, aliases=again.aliases)
    for call in again.gold_trace:
        assert box.call(call.name, call.args) == call.result
    result = run_instance(again, "baseline", perfect_factory())
    assert result.correct
    assert result.compliance == 1.0


def test_unknown_simplified_template() -> None:
    """Unknown names are rejected."""
    with pytest.raises(UnknownTemplateError):
        generate_simplified("dynamic_expansion", 1)


def test_alias_pool_sizes_match_table_14() -> None:
    """Table 14: 17, 8, 8, 15, 16, 15, 15 and >= 10 aliases; every shown name distinct."""
    assert dict(ALIAS_POOL_SIZES) == {
        "tool_a": 17,
        "tool_a_list": 8,
        "tool_iterations": 8,
        "tool_b": 15,
        "tool_c": 16,
        "tool_d": 15,
        "tool_expand": 15,
        "tool_value": 10,
    }
    names = [alias for aliases in ALIAS_POOL.values() for alias, _ in aliases]
    assert len(names) == len(set(names))
    assert ALIAS_POOL["tool_b"][0] == ("cross_reference", {"i": "primary_id", "j": "secondary_id"})


@pytest.mark.parametrize("base", sorted(ALIAS_POOL))
def test_every_alias_reads_in_a_spec_and_runs(base: str) -> None:
    """Each alias and its argument names parse in an event atom and run on the toolbox."""
    for alias, renames in ALIAS_POOL[base]:
        vocab = Vocab({base: alias}, {base: dict(renames)})
        info = TOOL_INFOS[base].params
        value = {p.name: ([1] if p.type == "array" else 1) for p in info}
        params = ", ".join(
            f"{vocab.a(base, p.name)}: {'list' if p.type == 'array' else 'int'}" for p in info
        )
        tests = ", ".join(f"{vocab.a(base, p.name)} = {value[p.name]}" for p in info)
        spec = agentguard.parse_spec(
            f"tool {alias}({params})\nconstraint seen := F {alias}({tests})\n"
        )
        args = {vocab.a(base, p.name): value[p.name] for p in info}
        box = Toolbox(1, 1, (alias,), aliases=vocab.to_aliases())
        record = {"tool_name": alias, "arguments": args, "tool_result": box.call(alias, args)}
        assert agentguard.verify_trace([record], spec).score == 1.0, alias
