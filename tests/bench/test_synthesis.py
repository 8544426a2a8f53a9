"""Layered constraint synthesis (Appendix A.4) as real `.ltl` text."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from agentguard.bench.generate import (
    generate_instance,
    generate_suite,
    instance_constraints,
    instance_spec_text,
)
from agentguard.bench.synthesis import LAYER_WEIGHTS, layer_weight_shares, ltl_value
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.language import parse_spec


def test_layer_weights_match_table_5() -> None:
    """L1 2.0, L2 1.5, L3 4.0, L4 3.0, L5 3.0, L6 1.0."""
    assert dict(LAYER_WEIGHTS) == {"L1": 2.0, "L2": 1.5, "L3": 4.0, "L4": 3.0, "L5": 3.0, "L6": 1.0}


def test_fan_out_fan_in_constraints() -> None:
    """The Appendix B instance gets each layer's predicate with the gold trace's values."""
    inst = generate_instance("fan_out_fan_in", 1, 42)
    formulas = {c.name: (c.layer, c.weight, c.formula) for c in instance_constraints(inst)}
    assert formulas["tool_a_list_called"] == ("L1", 2.0, "Called(tool_a_list)")
    assert formulas["tool_b_not_tool_c"] == ("L1", 2.0, "BranchCalled(tool_b, tool_c)")
    assert formulas["call_1_prompt_args"] == ("L2", 1.5, "CalledWith(tool_a_list, {seed: 42})")
    assert not any(layer == "L2" and "tool_b" in f for layer, _, f in formulas.values())
    assert formulas["global_sequence"] == (
        "L3",
        4.0,
        "InOrder([tool_a_list, tool_b, tool_b, tool_b, tool_d])",
    )
    assert formulas["call_1_then_call_2"] == (
        "L4",
        3.0,
        "(!tool_b(i = 8, j = 0) W tool_a_list(seed = 42)) "
        "& F(tool_a_list(seed = 42) & X F tool_b(i = 8, j = 0))",
    )
    assert formulas["call_4_then_call_5"] == (
        "L4",
        3.0,
        "(!tool_d(numbers = [11, 11, 11]) W tool_b(i = 46, j = 0)) "
        "& F(tool_b(i = 46, j = 0) & X F tool_d(numbers = [11, 11, 11]))",
    )
    assert "call_2_then_call_3" not in formulas  # fan-out items come in any order
    assert formulas["tool_b_count"] == ("L5", 3.0, "CalledN(tool_b, 3, =)")
    assert formulas["tool_c_count"] == ("L5", 3.0, "CalledN(tool_c, 0, =)")
    assert formulas["call_5_exact_args"] == (
        "L6",
        1.0,
        "CalledWith(tool_d, {numbers: [11, 11, 11]})",
    )


def test_every_layer_present_somewhere() -> None:
    """Across the paper grid every one of the six layers is emitted."""
    layers = {c.layer for inst in generate_suite() for c in instance_constraints(inst)}
    assert layers == set(LAYER_WEIGHTS)


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_spec_text_parses_with_core(template: str) -> None:
    """Emitted specs parse with agentguard's parser, keeping names, layers and weights."""
    for d in range(1, 6):
        inst = generate_instance(template, d, 42)
        spec = parse_spec(inst.spec_text)
        expected = instance_constraints(inst)
        assert [c.name for c in spec.constraints] == [c.name for c in expected]
        assert [(c.layer, c.weight) for c in spec.constraints] == [
            (c.layer, c.weight) for c in expected
        ]
        assert {t.name for t in spec.tools} == set(inst.tools)


def test_severity_tag_applies_to_all() -> None:
    """instance_spec_text(severity=...) tags every constraint with that severity."""
    inst = generate_instance("nested_loops", 2, 1)
    text = instance_spec_text(inst, severity="SOFT_BLOCK(3)")
    spec = parse_spec(text)
    assert {str(c.severity) for c in spec.constraints} == {"SOFT_BLOCK(3)"}
    assert len(re.findall(r"^constraint ", text, re.MULTILINE)) == len(spec.constraints)


def test_structural_share_is_about_73_percent() -> None:
    """L3-L5 carry most of the weight: about 70% on average (paper: about 73%, Figure 2)."""
    shares = []
    for name in TEMPLATE_NAMES:
        for d in range(1, 6):
            for seed in range(0, 200, 20):
                s = layer_weight_shares(instance_constraints(generate_instance(name, d, seed)))
                shares.append(s["L3"] + s["L4"] + s["L5"])
    mean = sum(shares) / len(shares)
    assert 0.68 <= mean <= 0.76


def test_ltl_values() -> None:
    """Literals render as AgentLTL values."""
    assert ltl_value([1, [2]]) == "[1, [2]]"
    assert ltl_value('a"b') == '"a\\"b"'
    assert ltl_value(True) == "true"
    assert ltl_value({"k": 1}) == "{k: 1}"


def test_figure_2_weights() -> None:
    """Figure 2 (fan_out_fan_in D1 seed 2): total weight 46.5, 73% on L3-L5, tool_c forbidden."""
    inst = generate_instance("fan_out_fan_in", 1, 2)
    constraints = instance_constraints(inst)
    assert sum(c.weight for c in constraints) == 46.5
    shares = layer_weight_shares(constraints)
    assert shares["L3"] + shares["L4"] + shares["L5"] == pytest.approx(34 / 46.5)
    per_layer = Counter(c.layer for c in constraints)
    assert per_layer == {"L1": 3, "L2": 1, "L3": 1, "L4": 6, "L5": 4, "L6": 5}
    tool_c = [c for c in constraints if "tool_c" in c.formula]
    assert [c.formula for c in tool_c] == ["BranchCalled(tool_b, tool_c)", "CalledN(tool_c, 0, =)"]
