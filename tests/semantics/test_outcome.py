"""`.ok` / `.error` offline: decided by `Call.error` (by truthiness)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard import Call, Trace, holds, load_spec, verify_trace
from agentguard.language import parse_formula
from agentguard.semantics.evaluator import Evaluator


def trace(error: object) -> Trace:
    return Trace(
        [
            Call("verify_identity", {"customer_id": "c1"}, "denied", 0, error),  # type: ignore[arg-type]
            Call("issue_refund", {"order_id": "A1", "amount": 5}, {"status": "ok"}, 1),
        ]
    )


@pytest.mark.parametrize("error", [True, "identity service timed out"])
def test_errored_call_is_not_ok(error: object) -> None:
    """A call that failed satisfies `.error`, not `.ok`, but still satisfies the bare atom."""
    t = trace(error)
    assert holds("G(issue_refund -> O verify_identity)", t)
    assert not holds("G(issue_refund -> O verify_identity.ok)", t)
    assert holds("F verify_identity.error", t)
    assert holds("F any.error & F issue_refund.ok", t)


def test_successful_call_is_ok() -> None:
    """A call without error satisfies `.ok`, also without a recorded result."""
    t = Trace([Call("verify_identity"), Call("issue_refund")])
    assert holds("G(issue_refund -> O verify_identity.ok)", t)
    assert not holds("F verify_identity.error", t)


def test_outcome_with_tests_and_quantifiers() -> None:
    """Outcome and argument tests combine; quantifier instances see both."""
    t = Trace(
        [
            Call("lookup_order", {"order_id": "A1"}, "not found", 0, True),
            Call("lookup_order", {"order_id": "B2"}, {"status": "ok"}, 1),
            Call("issue_refund", {"order_id": "A1"}, None, 2),
        ]
    )
    f = "forall o: G(issue_refund(order_id = o) -> O lookup_order(order_id = o).ok)"
    assert not holds(f, t)
    assert holds(f.replace(".ok", ""), t)
    assert holds('F lookup_order(order_id = "B2").ok', t)


def test_vector_and_cache_keep_outcomes_apart() -> None:
    """The evaluator caches `a`, `a.ok` and `a.error` separately."""
    ev = Evaluator(Trace([Call("a", error=True), Call("a")]))
    assert ev.vector(parse_formula("a")).tolist() == [True, True]
    assert ev.vector(parse_formula("a.ok")).tolist() == [False, True]
    assert ev.vector(parse_formula("a.error")).tolist() == [True, False]


def test_shipped_refund_spec_requires_a_successful_verification(specs_dir: Path) -> None:
    """The shipped refund spec flags a refund after a verification that raised."""
    spec = load_spec(specs_dir / "refund.ltl")
    t = Trace(
        [
            Call("lookup_order", {"order_id": "A1"}, {"status": "ok"}, 0),
            Call("verify_identity", {"customer_id": "c1"}, "boom", 1, True),
            Call("issue_refund", {"order_id": "A1", "amount": 5}, {"status": "ok"}, 2),
            Call("final_answer", {"answer": "done"}, None, 3),
        ]
    )
    report = verify_trace(t, spec)
    failed = {r.name for r in report.constraints if not r.passed}
    assert failed == {"identity_first"}
    ok = Trace([c if c.name != "verify_identity" else Call(c.name, c.args, "ok", 1) for c in t])
    assert verify_trace(ok, spec).compliance_score == 1.0
