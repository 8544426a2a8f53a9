"""reads_results: one conservative answer for the monitor, the firewall and the report."""

from __future__ import annotations

import pytest

from agentguard.language import parse_formula
from agentguard.language.reads import reads_results


@pytest.mark.parametrize(
    ("text", "reads"),
    [
        ("G !refund(amount > 100)", False),
        ("G (refund -> O verify)", False),
        ("G !lookup(result.status = 'closed')", True),
        ("forall o in results(lookup.order): F refund(order = o)", True),
        ("forall o in args(lookup.order): F refund(order = o)", False),
        ("F CalledWithResult(lookup, 'ok')", True),
    ],
)
def test_reads_results(text: str, reads: bool) -> None:
    """Result fields, result domains and result predicates read results; args do not."""
    assert reads_results(parse_formula(text)) is reads
