"""verify_trace: Definition 1, the Appendix B report shape, errors kept per constraint."""

from __future__ import annotations

import json
from pathlib import Path

from agentguard import Trace, load_spec, parse_spec, verify_trace
from agentguard.semantics.registry import Registry

APPENDIX_B_METRICS = {
    "num_steps": 7,
    "num_tool_calls": 6,
    "input_tokens": 13268,
    "output_tokens": 127,
    "total_tokens": 13395,
    "tool_calls": [
        {
            "step": 2,
            "tool_name": "tool_a",
            "arguments": {"seed": 42},
            "tool_result": '{"numbers": [8, 2, 46]}',
        },
        {
            "step": 3,
            "tool_name": "tool_b",
            "arguments": {"i": 8, "j": 0},
            "tool_result": '{"result": 11}',
        },
        {
            "step": 4,
            "tool_name": "tool_b",
            "arguments": {"i": 2, "j": 0},
            "tool_result": '{"result": 11}',
        },
        {
            "step": 5,
            "tool_name": "tool_b",
            "arguments": {"i": 46, "j": 0},
            "tool_result": '{"result": 11}',
        },
        {
            "step": 6,
            "tool_name": "tool_d",
            "arguments": {"numbers": [11, 11, 11]},
            "tool_result": '{"result": 33}',
        },
    ],
}


def test_appendix_b_reproduces_full_score_with_every_field(specs_dir: Path) -> None:
    """The Appendix B record scores 1.0 / FULL with the paper's exact keys and details."""
    report = verify_trace(
        APPENDIX_B_METRICS, load_spec(specs_dir / "appendix_b_fanout.ltl")
    ).to_dict()
    assert list(report) == [
        "compliance_score",
        "compliance_label",
        "details",
        "tool_sequence",
        "constraints",
    ]
    assert report["compliance_score"] == 1.0
    assert report["compliance_label"] == "FULL"
    assert report["details"] == "All constraints satisfied."
    assert report["tool_sequence"] == ["tool_a", "tool_b", "tool_b", "tool_b", "tool_d"]
    assert [c["name"] for c in report["constraints"]] == [
        "tool_a_called",
        "tool_a_before_branches",
        "branch_call_count",
        "tool_b_for_even",
        "tool_b_before_tool_d",
        "tool_d_called",
    ]
    for c in report["constraints"]:
        assert list(c) == ["name", "layer", "weight", "passed", "detail"]
        assert c["passed"] is True
    by_name = {c["name"]: c for c in report["constraints"]}
    assert by_name["tool_a_called"]["detail"] == '"tool_a" was called (call #1).'
    assert (
        by_name["tool_a_before_branches"]["detail"]
        == '"tool_a" (call #1) before "tool_d" (call #5).'
    )
    assert by_name["tool_b_for_even"]["detail"] == '"tool_b" called 3 time(s); expected >= 3.'
    assert (
        by_name["tool_b_before_tool_d"]["detail"] == '"tool_b" (call #2) before "tool_d" (call #5).'
    )
    assert (
        by_name["tool_b_before_tool_d"]["layer"],
        by_name["tool_b_before_tool_d"]["weight"],
    ) == ("L3", 4.0)
    json.dumps(report)


def test_score_is_weighted_share_of_satisfied_constraints() -> None:
    """C = 1 - violated weight / total weight, labelled PARTIAL, NONE or FULL."""
    spec = parse_spec("constraint a weight 3 := Called(x)\nconstraint b weight 1 := Called(y)")
    assert verify_trace(Trace.of("x"), spec).score == 0.75
    assert verify_trace(Trace.of("x"), spec).label == "PARTIAL"
    assert verify_trace(Trace.of("z"), spec).label == "NONE"
    assert verify_trace(Trace.of("y", "x"), spec).label == "FULL"
    assert (
        verify_trace(Trace.of("z"), spec).details
        == "Violated: ['a', 'b']. Missing tools: ['x', 'y']."
    )


def test_empty_procedure_scores_one() -> None:
    """With no constraints (total weight 0) nothing is violated: 1.0, FULL (documented)."""
    report = verify_trace(Trace.of("x"), parse_spec(""))
    assert (report.score, report.label) == (1.0, "FULL")


def test_a_raising_predicate_fails_only_its_constraint() -> None:
    """An evaluation error marks that constraint violated, with the error; others are scored."""
    reg = Registry()
    reg.register_predicate("boom", lambda v: 1 / 0, arity=1)
    spec = parse_spec(
        "constraint ok := Called(x)\nconstraint bad := forall v in args(x.k): boom(v)", registry=reg
    )
    report = verify_trace(
        Trace.from_records([{"tool_name": "x", "arguments": {"k": 1}}]), spec, registry=reg
    )
    ok, bad = report.constraints
    assert ok.passed and not bad.passed
    assert bad.error is not None and "ZeroDivisionError" in bad.error
    assert report.to_dict(extended=True)["constraints"][1]["error"] == bad.error


def test_temporal_details_point_at_the_violating_call() -> None:
    """A failed G names the first violating call; a failed quantifier names the value."""
    spec = parse_spec(
        "constraint g := G(refund -> O verify)\n"
        "constraint q := forall o: G(refund(order = o) -> O lookup(order = o))"
    )
    t = Trace.from_records(
        [
            {"tool_name": "lookup", "arguments": {"order": "A"}},
            {"tool_name": "refund", "arguments": {"order": "B"}},
        ]
    )
    g, q = verify_trace(t, spec).constraints
    assert g.detail.startswith('Violated at call #2 ("refund")')
    assert q.detail.startswith("Fails for o = 'B'")


def test_accepts_records_and_chat_messages() -> None:
    """verify_trace takes a Trace, a metrics record, records, or OpenAI chat messages."""
    spec = parse_spec("constraint c := Before(search, final_answer)")
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "1", "function": {"name": "search", "arguments": '{"q": "x"}'}}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "hits"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "2", "function": {"name": "final_answer", "arguments": "{}"}}],
        },
    ]
    assert verify_trace(messages, spec).passed
    assert verify_trace([{"tool_name": "search"}, {"tool_name": "final_answer"}], spec).passed


def test_tool_declarations_are_checked_without_changing_the_score() -> None:
    """Calls that break a `tool` declaration are reported (extended JSON); the score is unchanged."""
    spec = parse_spec(
        "tool lookup(order: str)\n"
        "tool refund(order: str from results(lookup.order), amount: number >= 0)\n"
        "constraint c := Called(refund)"
    )
    t = Trace.from_records(
        [
            {"tool_name": "lookup", "arguments": {"order": "A"}, "tool_result": {"order": "A"}},
            {"tool_name": "refund", "arguments": {"order": "B", "amount": 5}},
            {"tool_name": "refund", "arguments": {"order": "A", "amount": -1}},
            {"tool_name": "wire", "arguments": {}},
        ]
    )
    report = verify_trace(t, spec)
    assert report.score == 1.0
    kinds = [(p.position, p.kind) for p in report.tool_problems]
    assert kinds == [(1, "dependency"), (2, "schema"), (3, "schema")]
    assert "unknown tool 'wire'" in report.tool_problems[2].detail
    extended = report.to_dict(extended=True)
    assert extended["tool_problems"][0]["call"] == 2
    assert "tool_problems" not in report.to_dict()


def test_no_dependency_problems_without_recorded_results() -> None:
    """A trace without results (a decision log) cannot show dependencies: none reported."""
    spec = parse_spec(
        "tool lookup(order: str)\n"
        "tool refund(order: str from results(lookup.order))\n"
        "constraint c := Called(refund)"
    )
    t = Trace.from_records(
        [
            {"tool_name": "lookup", "arguments": {"order": "A"}},
            {"tool_name": "refund", "arguments": {"order": "A"}},
        ]
    )
    assert verify_trace(t, spec).tool_problems == ()


def test_conveniences_take_text_and_paths(specs_dir: Path) -> None:
    """holds takes formula text and records; verify_trace takes a .ltl path or spec text."""
    from agentguard import holds

    records = [{"tool_name": "search"}, {"tool_name": "final_answer", "arguments": {"answer": "x"}}]
    assert holds("Before(search, final_answer)", records)
    assert verify_trace(APPENDIX_B_METRICS, specs_dir / "appendix_b_fanout.ltl").label == "FULL"
    assert (
        verify_trace(APPENDIX_B_METRICS, str(specs_dir / "appendix_b_fanout.ltl")).label == "FULL"
    )
    assert verify_trace(records, "constraint c := Called(search)").score == 1.0
