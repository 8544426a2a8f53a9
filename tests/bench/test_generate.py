"""Templates, difficulty schedule and instance generation (Tables 7, 9, 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.bench.errors import (
    BadParameterError,
    InstanceFileError,
    InstanceTooLongError,
    UnknownTemplateError,
)
from agentguard.bench.generate import (
    MAX_CALLS,
    PAPER_SEEDS,
    generate_instance,
    generate_suite,
    instance_to_dict,
    instance_to_json,
)
from agentguard.bench.instance import Instance
from agentguard.bench.templates import TEMPLATE_NAMES, TEMPLATES, get_template
from agentguard.bench.tools import Toolbox
from agentguard.trace.model import Trace

PAPER_TEMPLATES = (
    "loop_termination",
    "branch_selection",
    "fan_out_fan_in",
    "forall_processing",
    "exists_selection",
    "nested_loops",
    "tool_condition_branching",
    "dynamic_expansion",
    "forall_exists_combined",
    "nested_loops+branching",
    "fan_out+loop",
    "loop+expansion",
)


def test_twelve_templates_in_table_order() -> None:
    """The registry holds Table 7's twelve templates in order."""
    assert TEMPLATE_NAMES == PAPER_TEMPLATES


def test_paper_example_loop_termination() -> None:
    """Appendix C.2: loop_termination D1 seed 42 calls tool_a(1) -> 2, tool_a(2) -> 5; answer 12."""
    inst = generate_instance("loop_termination", 1, 42)
    assert inst.expected_answer == 12
    assert inst.gold_records() == [
        {"tool_name": "tool_a", "arguments": {"i": 1}, "tool_result": {"result": 2}},
        {"tool_name": "tool_a", "arguments": {"i": 2}, "tool_result": {"result": 5}},
    ]


def test_appendix_b_record_is_fan_out_fan_in() -> None:
    """Appendix B's D1 seed 42 run (numbers [8, 2, 46], answer 33) is fan_out_fan_in."""
    inst = generate_instance("fan_out_fan_in", 1, 42)
    assert inst.expected_answer == 33
    assert [(c.name, dict(c.args)) for c in inst.gold_trace] == [
        ("tool_a_list", {"seed": 42}),
        ("tool_b", {"i": 8, "j": 0}),
        ("tool_b", {"i": 2, "j": 0}),
        ("tool_b", {"i": 46, "j": 0}),
        ("tool_d", {"numbers": [11, 11, 11]}),
    ]
    assert inst.gold_trace[0].result == {"numbers": [8, 2, 46]}


@pytest.mark.parametrize(
    ("template", "key", "values"),
    [
        ("loop_termination", "target", (10, 25, 50, 100, 200)),
        ("branch_selection", "num_decisions", (2, 3, 5, 7, 9)),
        ("fan_out_fan_in", "num_items", (3, 4, 5, 6, 7)),
        ("forall_processing", "num_items", (3, 4, 5, 6, 7)),
        ("exists_selection", "num_items", (3, 4, 5, 6, 7)),
        ("nested_loops", "N", (2, 3, 4, 5, 6)),
        ("tool_condition_branching", "d", (1, 2, 3, 4, 5)),
        ("dynamic_expansion", "max_depth", (2, 3, 4, 5, 6)),
        ("forall_exists_combined", "num_items", (3, 4, 5, 6, 7)),
        ("nested_loops+branching", "N", (2, 3, 4, 5, 6)),
        ("fan_out+loop", "r", (2, 2, 3, 3, 4)),
        ("loop+expansion", "target", (10, 25, 50, 100, 200)),
    ],
)
def test_difficulty_schedule(template: str, key: str, values: tuple[int, ...]) -> None:
    """Each template's scaling parameter follows Table 9 across D1-D5."""
    got = tuple(get_template(template).params(d, 42)[key] for d in range(1, 6))
    assert got == values


def test_list_length_is_num_items() -> None:
    """Fan-out templates get num_items = d + 2 numbers from tool_a_list."""
    for d in range(1, 6):
        inst = generate_instance("forall_processing", d, 7)
        assert len(inst.gold_trace[0].result["numbers"]) == d + 2


def test_paper_grid_is_complete_and_within_filter() -> None:
    """All 12 x 5 x {42, 123} paper instances are retained, with 2 to 50 gold calls."""
    suite = list(generate_suite(seeds=PAPER_SEEDS))
    assert len(suite) == 120
    lengths = [i.num_tool_calls_expected for i in suite]
    assert min(lengths) == 2
    assert max(lengths) <= MAX_CALLS


def test_generation_is_deterministic() -> None:
    """The same triplet always yields byte-identical instances."""
    for name in TEMPLATE_NAMES:
        a = instance_to_json(generate_instance(name, 3, 123))
        b = instance_to_json(generate_instance(name, 3, 123))
        assert a == b


def test_gold_trace_replays_on_fresh_tools() -> None:
    """Every gold call's result is what a fresh toolbox returns for its arguments."""
    for name in TEMPLATE_NAMES:
        inst = generate_instance(name, 2, 99)
        box = Toolbox(inst.seed, inst.difficulty)
        for call in inst.gold_trace:
            assert box.call(call.name, call.args) == call.result
            assert call.name in inst.tools


def test_fifty_call_filter() -> None:
    """A gold trace longer than the limit raises InstanceTooLongError and is skipped by suites."""
    with pytest.raises(InstanceTooLongError) as info:
        generate_instance("nested_loops+branching", 5, 42, max_calls=10)
    assert info.value.calls == 50
    assert list(generate_suite(["nested_loops+branching"], [5], [42], max_calls=10)) == []


def test_prompt_style_and_inlined_numbers() -> None:
    """Prompts have PROCEDURE / RULES / ANSWER FORMAT blocks and inline the parameters."""
    inst = generate_instance("branch_selection", 2, 123)
    for block in ("PROCEDURE\n", "RULES\n", "ANSWER FORMAT\n"):
        assert block in inst.prompt
    p = inst.params
    assert str(p["threshold"]) in inst.prompt
    assert f"j = {p['j']}" in inst.prompt
    assert "123" in inst.prompt
    assert "difficulty" not in inst.prompt.lower()


def test_instance_fields_and_round_trip(tmp_path: Path) -> None:
    """An instance carries Table 10's fields and reloads identically from JSON."""
    inst = generate_instance("exists_selection", 4, 5)
    data = instance_to_dict(inst)
    for key in (
        "prompt",
        "gold_trace",
        "expected_answer",
        "constraints",
        "num_tool_calls_expected",
        "difficulty",
    ):
        assert key in data
    path = tmp_path / "x.json"
    path.write_text(instance_to_json(inst))
    assert Instance.load(path) == inst


def test_gold_trace_loads_as_agentguard_trace() -> None:
    """gold_records() feed Trace.from_records; results stay structured."""
    inst = generate_instance("tool_condition_branching", 1, 42)
    trace = Trace.from_records(inst.gold_records())
    assert trace.names == tuple(c.name for c in inst.gold_trace)
    assert trace[0].result == inst.gold_trace[0].result


def test_bad_inputs() -> None:
    """Unknown templates, difficulties and seeds are rejected with typed errors."""
    with pytest.raises(UnknownTemplateError):
        generate_instance("nope", 1, 1)
    with pytest.raises(BadParameterError):
        generate_instance("loop_termination", 6, 1)
    with pytest.raises(BadParameterError):
        generate_instance("loop_termination", 1, -1)


def test_plus_alias() -> None:
    """File-safe names with _plus_ resolve to the + templates."""
    assert get_template("fan_out_plus_loop") is TEMPLATES["fan_out+loop"]


def test_bad_instance_file(tmp_path: Path) -> None:
    """A JSON file that is not an instance raises InstanceFileError."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"template": "x"}))
    with pytest.raises(InstanceFileError):
        Instance.load(path)
