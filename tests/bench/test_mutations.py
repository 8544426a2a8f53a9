"""Synthesized specs reject every single-step departure from what the procedure determines."""

from __future__ import annotations

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

import agentguard
from agentguard.bench.errors import InstanceTooLongError
from agentguard.bench.generate import generate_instance
from agentguard.bench.instance import Instance
from agentguard.bench.mutations import MUTATION_KINDS, Mutation, mutations
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.language.ast import Spec
from agentguard.trace.model import Trace


def _score(mutation: Mutation, spec: Spec) -> float:
    return float(agentguard.verify_trace(Trace.from_records(list(mutation.records)), spec).score)


def _check(inst: Instance, mutation: Mutation, spec: Spec) -> None:
    score = _score(mutation, spec)
    if mutation.changes_procedure:
        assert score < 1.0, f"{inst.id}: {mutation.description} still scores 1.0"
    else:
        assert score == 1.0, f"{inst.id}: {mutation.description} is free but scores {score}"


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_every_single_step_mutation_on_a_small_grid(template: str) -> None:
    """D1-D2 seed 7 and D1 seed 50 (its list repeats one number): every kind and position."""
    for difficulty, seed in ((1, 7), (2, 7), (1, 50)):
        inst = generate_instance(template, difficulty, seed)
        spec = agentguard.parse_spec(inst.spec_text)
        assert agentguard.verify_trace(inst.trace(), spec).score == 1.0
        kinds = set()
        for m in mutations(inst):
            kinds.add(m.kind)
            _check(inst, m, spec)
        assert {"wrong_argument", "skip"} <= kinds


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(TEMPLATE_NAMES),
    st.integers(1, 5),
    st.integers(0, 100_000),
    st.sampled_from(MUTATION_KINDS),
    st.data(),
)
def test_mutation_changing_the_procedure_loses_compliance(
    template: str, difficulty: int, seed: int, kind: str, data: st.DataObject
) -> None:
    """For any template, difficulty and seed, a mutation the procedure forbids scores < 1.0.

    Swapping two whole items of a fan-out over a set is not forbidden and keeps 1.0; the
    gold trace itself scores exactly 1.0.
    """
    try:
        inst = generate_instance(template, difficulty, seed)
    except InstanceTooLongError:
        reject()
    spec = agentguard.parse_spec(inst.spec_text)
    assert agentguard.verify_trace(inst.trace(), spec).score == 1.0
    candidates = [m for m in mutations(inst) if m.kind == kind]
    if not candidates:
        return
    _check(inst, data.draw(st.sampled_from(candidates)), spec)


def test_loop_index_repeat_is_caught() -> None:
    """loop_termination D3 s42: calling tool_a(3) twice instead of tool_a(3), tool_a(4) fails."""
    inst = generate_instance("loop_termination", 3, 42)
    records = inst.gold_records()
    assert [r["arguments"]["i"] for r in records[2:4]] == [3, 4]
    records[3] = {**records[2]}
    report = agentguard.verify_trace(
        Trace.from_records(records), agentguard.parse_spec(inst.spec_text)
    )
    assert {r.layer for r in report.violated} == {"L4", "L6"}


def test_wrong_branch_argument_is_caught() -> None:
    """branch_selection D2 s42: tool_c(x=7) instead of tool_c(x=6) loses compliance."""
    inst = generate_instance("branch_selection", 2, 42)
    records = inst.gold_records()
    k = next(i for i, r in enumerate(records) if r["tool_name"] == "tool_c")
    records[k] = {**records[k], "arguments": {"x": records[k]["arguments"]["x"] + 1}}
    spec = agentguard.parse_spec(inst.spec_text)
    assert agentguard.verify_trace(Trace.from_records(records), spec).score < 1.0


def test_fan_out_items_may_come_in_any_order() -> None:
    """forall_processing: the tool_b items reversed keep 1.0; tool_d's list stays in list order."""
    inst = generate_instance("forall_processing", 3, 42)
    records = inst.gold_records()
    records[1:-1] = reversed(records[1:-1])
    spec = agentguard.parse_spec(inst.spec_text)
    assert agentguard.verify_trace(Trace.from_records(records), spec).score == 1.0
