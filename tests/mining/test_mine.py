"""``mine`` on concrete runs: schemas, data flows, provenance, negatives, lint."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.analysis import lint_spec
from agentguard.mining import MiningError, mine
from agentguard.scoring import verify_trace
from agentguard.trace.model import Call, Trace

SPECS = Path(__file__).resolve().parents[2] / "specs"
REFUND_TRACES = [SPECS / "traces" / "refund.pass.json", SPECS / "traces" / "refund.fail.json"]


def _run(order: str, amount: float, *, user: bool = False) -> Trace:
    calls = [Call.message("user", f"Please refund order {order}.")] if user else []
    calls += [
        Call(
            "lookup_order",
            {"order_id": order},
            {"order_id": order, "total": amount, "items": [f"I-{order}"]},
        ),
        Call("verify_identity", {"customer_id": "C-" + order}, {"verified": True}),
        Call(
            "issue_refund", {"order_id": order, "amount": amount, "reason": "damaged"}, {"ok": True}
        ),
        Call("final_answer", {"answer": "done"}),
    ]
    return Trace(tuple(c.at(i) for i, c in enumerate(calls)))


RUNS = [_run(o, a) for o, a in [("A1", 20.0), ("B2", 75.5), ("C3", 310.0), ("D4", 20.0)]]


def _formulas(text: str) -> list[str]:
    return [line.strip()[3:] for line in text.splitlines() if line.strip().startswith(":=")]


def test_the_refund_data_flow_is_found() -> None:
    """issue_refund's order id and amount come from the lookup: the issue's own example."""
    found = _formulas(mine(RUNS).text)
    assert "forall v: G(issue_refund(order_id = v) -> O lookup_order(order_id = v))" in found
    assert "forall v: G(issue_refund(amount = v) -> O lookup_order(result.total = v))" in found


def test_a_value_taken_from_another_source_breaks_the_flow() -> None:
    """A refund of an order nobody looked up violates the mined spec."""
    mined = mine(RUNS)
    bad = _run("A1", 20.0)
    bad = Trace(
        tuple(
            c
            if c.name != "issue_refund"
            else Call(
                "issue_refund",
                {"order_id": "Z9", "amount": 20.0, "reason": "damaged"},
                {"ok": True},
                c.position,
            )
            for c in bad
        )
    )
    failed = [c.name for c in verify_trace(bad, mined.spec).constraints if not c.passed]
    assert any(name.startswith("dataflow_issue_refund_order_id") for name in failed)


def test_tools_are_declared_with_the_types_and_values_seen() -> None:
    """Types, a recurring text as an enumeration, a numeric range, nothing unseen."""
    mined = mine(RUNS)
    assert "tool issue_refund(amount: number, order_id: str, reason: str)" in mined.text
    assert 'G(issue_refund -> issue_refund(reason in ["damaged"]))' in mined.text
    assert "G(issue_refund -> issue_refund(amount >= 20, amount <= 310))" in mined.text
    assert "tool final_answer" not in mined.text  # always allowed, never declared


def test_an_argument_missing_from_some_calls_is_optional() -> None:
    """Optional arguments get `?` and their value constraints a presence guard."""
    runs = [
        Trace((Call("search", {"q": "x", "limit": 5}),)),
        Trace((Call("search", {"q": "y"}),)),
        Trace((Call("search", {"q": "x", "limit": 9}),)),
    ]
    mined = mine(runs)
    assert "tool search(limit?: int, q: str)" in mined.text
    assert "G(search(limit != null) -> search(limit >= 5, limit <= 9))" in mined.text


def test_an_argument_named_result_is_written_args_result() -> None:
    """`result` alone would be the call's result; the argument is `args.result`."""
    runs = [
        Trace((Call("a", {"result": "abc"}, "r"), Call("b", {"x": "abc"}).at(1))) for _ in range(2)
    ]
    found = _formulas(mine(runs).text)
    assert "forall v: G(b(x = v) -> O a(args.result = v))" in found


def test_arguments_quoted_from_the_user_are_traced_to_the_messages() -> None:
    """With dialogue recorded, an order id the user typed is a provenance constraint."""
    mined = mine([_run(o, 10.0, user=True) for o in ("A17", "B22", "C31")])
    assert (
        "forall v: G(lookup_order(order_id = v) -> O user_message(text contains v))"
        in _formulas(mined.text)
    )
    hijacked = Trace(
        (
            Call.message("user", "Refund order A17."),
            Call(
                "lookup_order", {"order_id": "Q99"}, {"order_id": "Q99", "total": 10.0, "items": []}
            ).at(1),
        )
    )
    failed = [c.name for c in verify_trace(hijacked, mined.spec).constraints if not c.passed]
    assert any(name.startswith("provenance_lookup_order") for name in failed)


def test_the_mined_specs_lint_clean() -> None:
    """No warning: nothing valid, unsatisfiable, conflicting, late or never-blocking."""
    for runs in (RUNS, [_run(o, 10.0, user=True) for o in ("A17", "B22")]):
        assert lint_spec(mine(runs).spec) == ()
    assert lint_spec(mine(REFUND_TRACES).spec) == ()


def test_negative_runs_keep_only_what_rejects_them() -> None:
    """Every kept constraint rejects a negative run; each negative run is rejected."""
    bad = Trace(
        tuple(c.at(i) for i, c in enumerate([RUNS[0][2], RUNS[0][0], RUNS[0][1], RUNS[0][3]]))
    )
    mined = mine(RUNS, negative=[bad])
    assert mined.separating == 1 and mined.negatives == 1
    assert all(c.rejects == 1 for c in mined.constraints)
    assert len(mined.constraints) < len(mine(RUNS).constraints)
    assert "rejects 1/1 negative run(s)" in mined.text


def test_min_support_out_of_range_and_no_traces_are_errors() -> None:
    """A share outside (0, 1] and an empty input are refused before any work."""
    with pytest.raises(MiningError, match="min_support"):
        mine(RUNS, min_support=0)
    with pytest.raises(MiningError, match="no traces"):
        mine([])


def test_an_unreadable_record_is_named(tmp_path: Path) -> None:
    """A bad record stops the mining and the error names file and line."""
    path = tmp_path / "runs.jsonl"
    path.write_text('{"tool_calls": [{"tool_name": "a", "arguments": {}}]}\n{not json\n')
    with pytest.raises(MiningError, match=r"runs\.jsonl.*2"):
        mine([path])
