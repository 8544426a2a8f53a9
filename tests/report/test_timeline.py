"""Per-call verdicts of every constraint (the report's timeline), from the online monitor."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import load_spec, verify_trace
from agentguard.language import ast as A
from agentguard.report.timeline import (
    HOLDS_IF_ENDED,
    OWES,
    SATISFIED,
    TEXT_LIMIT,
    short,
    timeline,
)
from agentguard.trace.loaders import load_traces
from agentguard.trace.model import Call, Trace
from tests.strategies import propositional, traces


def test_refund_failure_is_located_with_its_repair_hint(specs_dir: Path) -> None:
    """The shipped failing refund run: identity_first fails at call 1, with the firewall's hint."""
    spec = load_spec(specs_dir / "refund.ltl")
    trace = load_traces(specs_dir / "traces/refund.fail.json")[0].trace
    assert trace is not None
    t = timeline(trace, spec, verify_trace(trace, spec))
    assert t.codes["identity_first"] == "v" * len(trace)
    first = {v.constraint: v for v in t.violations}
    assert first["identity_first"].position == 0
    assert (
        first["identity_first"].hint
        == "call verify_identity successfully before calling issue_refund"
    )
    assert first["refund_cap"].position == 1  # the 640.0 refund
    assert {v.constraint for v in t.violations} == {
        "identity_first",
        "refund_only_known_orders",
        "refund_cap",
        "one_refund_per_order",
    }


def test_obligation_left_open_is_a_violation_at_the_end() -> None:
    """F send_email never met: pending all along, violated at the end with a hint to finish."""
    spec = A.Spec("s", (A.Constraint("notify", A.Eventually(A.Event("send_email"))),))
    trace = Trace.of("lookup", "lookup")
    t = timeline(trace, spec, verify_trace(trace, spec))
    assert t.codes["notify"] == "pp"
    (v,) = t.violations
    assert v.position is None and "send_email" in v.hint


def test_long_values_are_cut() -> None:
    """Arguments and results are shortened to TEXT_LIMIT characters in a report."""
    assert len(short({"k": "x" * 1000})) == TEXT_LIMIT
    assert short("ok") == "ok"


@settings(max_examples=150, deadline=None)
@given(st.lists(propositional(max_leaves=6), min_size=1, max_size=3), traces(max_size=6))
def test_last_cell_equals_the_offline_verdict(formulas: list[A.Formula], trace: Trace) -> None:
    """Online = offline: after the last call, each constraint's cell says what verify_trace says,
    and decided verdicts never change along the timeline."""
    spec = A.Spec("s", tuple(A.Constraint(f"c{i}", f) for i, f in enumerate(formulas)))
    report = verify_trace(trace, spec)
    t = timeline(trace, spec, report)
    if not trace.calls:
        return
    for c in report.constraints:
        codes = t.codes[c.name]
        assert (codes[-1] in (SATISFIED, HOLDS_IF_ENDED)) == c.passed, (c.name, codes)
        for decided in "sv":
            if decided in codes:
                assert set(codes[codes.index(decided) :]) == {decided}
    violated_mid_run = {v.constraint: v.position for v in t.violations if v.position is not None}
    for name, position in violated_mid_run.items():
        assert t.codes[name].index("v") == position


def test_errored_call_is_marked() -> None:
    """A call recorded as a tool error keeps that flag in the timeline."""
    spec = A.Spec("s", (A.Constraint("c", A.Const(True)),))
    trace = Trace((Call("a", {}, "boom", 0, True),))
    (step,) = timeline(trace, spec, verify_trace(trace, spec)).steps
    assert step.error and step.result == "boom"


def test_dialogue_events_are_rows_judged_only_by_specs_naming_them(specs_dir: Path) -> None:
    """Message rows carry their kind and text; a spec naming no message marks them unjudged."""
    from agentguard.language import parse_spec
    from agentguard.report.timeline import UNJUDGED

    trace = Trace(
        (
            Call.message("user", "book it"),
            Call("lookup", {}, 1),
            Call.message("assistant", "Shall I?", tool_calls=0),
            Call.message("user", "yes"),
            Call("book", {}, 2),
        )
    )
    talk = parse_spec(r"constraint c := G(book -> O user_message(text ~ /\byes\b/))")
    t = timeline(trace, talk, verify_trace(trace, talk))
    assert [s.kind for s in t.steps] == ["user", "tool", "assistant", "user", "tool"]
    assert t.steps[3].args == "yes" and t.to_dict()["steps"][0][4] == "user"
    # once the user said yes, O yes holds for good: satisfied from then on
    assert t.codes["c"] == HOLDS_IF_ENDED * 3 + SATISFIED * 2 and not t.violations
    tools = parse_spec("constraint n := G(lookup -> X book)")
    t = timeline(trace, tools, verify_trace(trace, tools))
    # the monitor skips the messages: lookup's next position is the booking
    assert t.codes["n"] == UNJUDGED + OWES + UNJUDGED * 2 + HOLDS_IF_ENDED and not t.violations


def test_steps_are_numbered_as_verify_trace_numbers_calls() -> None:
    """A spec naming no message numbers the tool calls only, the number its details give
    ("call #4"); a spec naming one numbers every position, messages included."""
    from agentguard.language import parse_spec

    calls: list[Call] = []
    for name in ("a", "a", "a", "d"):
        calls += [Call.message("user", "go on"), Call(name, {}, 1)]
    trace = Trace(tuple(calls))
    spec = parse_spec("constraint never_d := G(!d)")
    report = verify_trace(trace, spec)
    t = timeline(trace, spec, report)
    assert [s.number for s in t.steps] == [None, 1, None, 2, None, 3, None, 4]
    (violation,) = t.violations
    assert t.steps[violation.position].number == 4  # the row of the call #4 below
    assert 'call #4 ("d")' in report.constraints[0].detail
    assert t.to_dict()["steps"][7][5] == 4
    talk = parse_spec("constraint c := G(d -> O user_message)")
    t = timeline(trace, talk, verify_trace(trace, talk))
    assert [s.number for s in t.steps] == list(range(1, 9))
