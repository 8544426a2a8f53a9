"""The free-variable memo every evaluator shares: right answers, bounded size."""

from __future__ import annotations

import pytest

from agentguard import Trace, parse_spec, verify_trace
from agentguard.language import parse_formula
from agentguard.semantics import variables
from agentguard.semantics.variables import free_variables, shared_free_memo
from agentguard.trace.model import Call


def test_shared_memo_answers_as_a_fresh_one() -> None:
    """A formula asked through the shared memo has the free variables a fresh memo finds."""
    f = parse_formula("forall o: G(refund(order_id = o) -> O lookup(order_id = o) & x.ok)")
    assert free_variables(f, shared_free_memo()) == free_variables(f, {}) == frozenset()
    body = f.body  # type: ignore[attr-defined]
    assert free_variables(body, shared_free_memo()) == free_variables(body) == {"o"}


def test_shared_memo_is_cleared_at_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its limit the memo starts over, and scoring is unchanged by it."""
    monkeypatch.setattr(variables, "SHARED_FREE_LIMIT", 8)
    spec = parse_spec(
        "spec s\n"
        "constraint one := forall o: G(refund(order_id = o) -> O lookup(order_id = o))\n"
        "constraint two := G(refund -> O verify.ok)\n"
    )
    trace = Trace((Call("lookup", {"order_id": "A"}, "ok"), Call("refund", {"order_id": "B"})))
    first = verify_trace(trace, spec)
    for _ in range(3):  # each run may clear it again; the answers never move
        again = verify_trace(trace, spec)
        assert again == first
        assert [r.passed for r in again.constraints] == [False, False]
    assert len(variables._shared_free) >= 8  # a run fills it past the limit...
    assert len(shared_free_memo()) == 0  # ...and it is cleared before it is handed out
