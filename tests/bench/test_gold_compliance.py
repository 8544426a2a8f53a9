"""Every gold trace scores exactly 1.0 on its own synthesized spec (core verifier)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import agentguard
from agentguard.bench.generate import generate_instance, generate_suite
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.trace.model import Trace

UNFILTERED = 10_000
"""A call budget no generated instance reaches (the paper filters at 50: some seeds of
the larger templates pass it, and the properties hold for them as well)."""


def score(instance_trace: Trace, spec_text: str) -> float:
    return float(agentguard.verify_trace(instance_trace, agentguard.parse_spec(spec_text)).score)


def test_paper_grid_gold_traces_score_one() -> None:
    """All 120 paper instances (12 templates x D1-D5 x seeds 42, 123) score 1.0 / FULL."""
    for inst in generate_suite():
        report = agentguard.verify_trace(inst.trace(), agentguard.parse_spec(inst.spec_text))
        assert report.score == 1.0, inst.id
        assert report.label == "FULL"


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(TEMPLATE_NAMES), st.integers(1, 5), st.integers(0, 100_000))
@example("dynamic_expansion", 4, 3273)  # 53 calls: it failed the filter, not the property
def test_gold_trace_scores_one(template: str, difficulty: int, seed: int) -> None:
    """For any template, difficulty and seed, the gold trace scores exactly 1.0 (past the
    paper's 50-call filter too: the synthesis does not depend on it)."""
    inst = generate_instance(template, difficulty, seed, max_calls=UNFILTERED)
    assert score(inst.trace(), inst.spec_text) == 1.0


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(TEMPLATE_NAMES), st.integers(1, 5), st.integers(0, 1000), st.data())
def test_dropping_any_call_loses_compliance(
    template: str, difficulty: int, seed: int, data: st.DataObject
) -> None:
    """Removing one gold call always scores below 1.0 (the L5 count catches it)."""
    inst = generate_instance(template, difficulty, seed, max_calls=UNFILTERED)
    k = data.draw(st.integers(0, inst.num_tool_calls_expected - 1))
    records = inst.gold_records()
    del records[k]
    assert score(Trace.from_records(records), inst.spec_text) < 1.0


def test_appendix_b_trace_is_full() -> None:
    """The Appendix B metrics record (fan_out_fan_in D1 seed 42) is FULL on our spec."""
    inst = generate_instance("fan_out_fan_in", 1, 42)
    metrics = {
        "num_steps": 7,
        "num_tool_calls": 5,
        "tool_calls": [
            {
                "step": 2,
                "tool_name": "tool_a_list",
                "arguments": {"seed": 42},
                "tool_result": '{"numbers": [8, 2, 46]}',
            },
            *(
                {
                    "step": 3 + k,
                    "tool_name": "tool_b",
                    "arguments": {"i": n, "j": 0},
                    "tool_result": '{"result": 11}',
                }
                for k, n in enumerate((8, 2, 46))
            ),
            {
                "step": 6,
                "tool_name": "tool_d",
                "arguments": {"numbers": [11, 11, 11]},
                "tool_result": '{"result": 33}',
            },
        ],
    }
    assert score(Trace.from_metrics(metrics), inst.spec_text) == 1.0


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_wrong_final_args_only_costs_argument_layers(template: str) -> None:
    """Changing the last call's arguments costs argument layers (L2, L4, L6), never L3 or L5."""
    inst = generate_instance(template, 2, 42)
    records = inst.gold_records()
    last = records[-1]
    last["arguments"] = {
        k: ([*v, 999] if isinstance(v, list) else v + 999) for k, v in last["arguments"].items()
    }
    spec = agentguard.parse_spec(inst.spec_text)
    report = agentguard.verify_trace(Trace.from_records(records), spec)
    failed = {r.layer for r in report.violated}
    assert report.score < 1.0
    assert "L6" in failed
    assert failed <= {"L2", "L4", "L6"}
