"""The compliance reward of Appendix E: shaped accuracy, trace distance, TRL adapter."""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentguard
from agentguard.bench.errors import BenchError
from agentguard.bench.generate import generate_instance
from agentguard.bench.reward import (
    RewardWeights,
    Step,
    answer_format,
    completion_trace,
    compliance_reward,
    core_compliance,
    distance_reward,
    make_grpo_reward,
    parse_answer,
    shaped_accuracy,
    trace_distance,
)
from agentguard.trace.model import Trace

HAS_CORE = hasattr(agentguard, "verify_trace") and hasattr(agentguard, "parse_spec")
needs_core = pytest.mark.skipif(not HAS_CORE, reason="agentguard.verify_trace not landed yet")

G = [("tool_a", {"x": 1}), ("tool_b", {"y": 2})]
P = [("tool_a", {"x": 9}), ("tool_c", {"z": 0}), ("tool_b", {"y": 2})]


def test_worked_example_e2() -> None:
    """E.2: d = 0.5 (args) + 1.0 (insert tool_c) + 0 = 1.5 and R_dist = exp(-1.5) ≈ 0.223."""
    assert trace_distance(G, P) == 1.5
    assert distance_reward(G, P) == pytest.approx(0.223, abs=5e-4)


def test_edit_costs() -> None:
    """Tool mismatch 1.0, argument mismatch 0.5, insertion and deletion 1.0 each."""
    assert trace_distance([("a", {})], [("b", {})]) == 1.0
    assert trace_distance([("a", {"k": 1})], [("a", {"k": 2})]) == 0.5
    assert trace_distance([], [("a", {})]) == 1.0
    assert trace_distance([("a", {})], []) == 1.0
    assert trace_distance([("a", {"k": 1})], [("a", {"k": 1.0})]) == 0.0


steps = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.fixed_dictionaries({"k": st.integers(0, 2)})),
    max_size=6,
)


@given(steps, steps)
def test_distance_is_symmetric_and_bounded(g: list[Step], p: list[Step]) -> None:
    """d(G, P) = d(P, G), 0 <= d <= max(n, m), and d(G, G) = 0."""
    d = trace_distance(g, p)
    assert d == trace_distance(p, g)
    assert 0 <= d <= max(len(g), len(p))
    assert trace_distance(g, g) == 0


@given(steps, steps, steps)
def test_distance_triangle_inequality(a: list[Step], b: list[Step], c: list[Step]) -> None:
    """The weighted edit distance is a metric: d(a, c) <= d(a, b) + d(b, c)."""
    assert trace_distance(a, c) <= trace_distance(a, b) + trace_distance(b, c) + 1e-9


def test_distance_accepts_traces_and_records() -> None:
    """Gold records and agentguard Traces compare directly."""
    inst = generate_instance("forall_processing", 1, 42)
    assert trace_distance(inst.gold_records(), inst.trace()) == 0.0


def test_shaped_accuracy() -> None:
    """E.1: 1.0 correct, 0.1 well-formatted but wrong, 0.0 invalid format."""
    assert shaped_accuracy("ANSWER: 12", 12) == 1.0
    assert shaped_accuracy("12", 12) == 1.0
    assert shaped_accuracy(12, 12) == 1.0
    assert shaped_accuracy("ANSWER: 13", 12) == 0.1
    assert shaped_accuracy("twelve", 12) == 0.0
    assert shaped_accuracy(None, 12) == 0.0
    assert parse_answer("reasoning...\nANSWER: -4") == -4


@pytest.mark.parametrize(
    ("answer", "kind", "shaped"),
    [
        ("ANSWER: 33", "integer", 1.0),
        ("  33  ", "integer", 1.0),
        ("ANSWER: 33.5", "malformed_number", 0.1),
        ("ANSWER: 33,000", "malformed_number", 0.1),
        ("ANSWER: 33.0", "malformed_number", 0.1),
        ("ANSWER: 3.3e1", "malformed_number", 0.1),
        ("ANSWER: +33", "malformed_number", 0.1),
        ("33.", "malformed_number", 0.1),
        (33.0, "malformed_number", 0.1),
        ("ANSWER: thirty-three", "unformatted", 0.0),
        ("ANSWER: 33 apples", "unformatted", 0.0),
        ("The answer is 33", "unformatted", 0.0),
        (True, "unformatted", 0.0),
    ],
)
def test_only_an_exact_integer_is_correct(answer: object, kind: str, shaped: float) -> None:
    """An exact integer is correct; a malformed number is formatted-but-wrong; words are 0."""
    assert answer_format(answer)[0] == kind
    assert shaped_accuracy(answer, 33) == shaped
    assert (parse_answer(answer) == 33) is (kind == "integer")


def test_weights() -> None:
    """Default weights are (0.5, 0.25, 0.25) = from_alpha(0.5); alpha is range-checked."""
    assert RewardWeights() == RewardWeights.from_alpha(0.5)
    w = RewardWeights.from_alpha(0.8)
    assert (w.compliance, w.accuracy, w.distance) == pytest.approx((0.8, 0.1, 0.1))
    with pytest.raises(BenchError):
        RewardWeights.from_alpha(1.5)


def constant_compliance(value: float) -> Callable[[Trace, object], float]:
    def fn(trace: Trace, spec: object) -> float:
        return value

    return fn


def test_reward_combines_terms() -> None:
    """R = w_C C + w_A Acc + w_D R_dist, with configurable weights."""
    inst = generate_instance("loop_termination", 1, 42)
    r = compliance_reward(
        inst.trace(),
        "ANSWER: 12",
        spec=inst.spec_text,
        gold_trace=inst.gold_records(),
        expected_answer=12,
        compliance=constant_compliance(0.6),
    )
    assert r.reward == pytest.approx(0.5 * 0.6 + 0.25 * 1.0 + 0.25 * 1.0)
    w = RewardWeights(1.0, 0.0, 0.0)
    r2 = compliance_reward(
        Trace(),
        "ANSWER: 1",
        spec="",
        gold_trace=inst.gold_records(),
        expected_answer=12,
        weights=w,
        compliance=constant_compliance(0.3),
    )
    assert r2.reward == pytest.approx(0.3)
    assert r2.distance == pytest.approx(math.exp(-2))


def test_completion_trace_conversational() -> None:
    """Chat completions with tool_calls and tool replies become a Trace plus the final text."""
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "function": {"name": "tool_a", "arguments": json.dumps({"i": 1})}}
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": json.dumps({"result": 2})},
        {"role": "assistant", "content": "ANSWER: 12"},
    ]
    trace, answer = completion_trace(messages)
    assert trace.names == ("tool_a",)
    assert trace[0].result == {"result": 2}
    assert answer == "ANSWER: 12"


def test_grpo_reward_signature_and_columns() -> None:
    """The TRL reward takes prompts/completions plus dataset columns as kwargs, one per sample."""
    inst = generate_instance("loop_termination", 1, 42)
    lines = "\n".join(json.dumps(r) for r in inst.gold_records())
    reward = make_grpo_reward(compliance=constant_compliance(1.0))
    assert reward.__name__ == "agentltl_reward"
    params = inspect.signature(reward).parameters
    assert "prompts" in params
    assert "completions" in params
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    out = reward(
        prompts=[inst.prompt, inst.prompt],
        completions=[lines + "\nANSWER: 12", "ANSWER: 7"],
        spec=[inst.spec_text] * 2,
        gold_trace=[json.dumps(inst.gold_records())] * 2,
        expected_answer=[12, 12],
        completion_ids=[[0], [0]],
        trainer_state=None,
    )
    assert out[0] == pytest.approx(1.0)
    assert out[1] == pytest.approx(0.5 + 0.25 * 0.1 + 0.25 * math.exp(-2))


@needs_core
def test_core_compliance_gold_is_one() -> None:
    """With the core verifier, the gold trace's reward is exactly 1.0."""
    inst = generate_instance("fan_out_fan_in", 1, 42)
    assert core_compliance(inst.trace(), inst.spec_text) == 1.0
    reward = make_grpo_reward()
    lines = "\n".join(json.dumps(r) for r in inst.gold_records())
    assert reward(
        prompts=[""],
        completions=[lines + "\nANSWER: 33"],
        spec=[inst.spec_text],
        gold_trace=[inst.gold_records()],
        expected_answer=[33],
    ) == [pytest.approx(1.0)]
