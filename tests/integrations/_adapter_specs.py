"""Small real specs for the adapter tests: one constraint per behaviour under test."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard import Spec, parse_spec

TOOLS = """
tool lookup_order(order_id: str)
tool issue_refund(order_id: str, amount: number)
tool delete_account()
tool verify_identity(customer_id: str)
"""


def rules(
    *,
    block: Iterable[str] = (),
    stop: Iterable[str] = (),
    warn: Iterable[str] = (),
    answer_after: Iterable[str] = (),
    stop_on_result: Iterable[str] = (),
) -> Spec:
    """A spec that blocks ``block`` tools (SOFT_BLOCK, high limit), stops on ``stop`` tools,
    warns on ``warn`` tools (BLOCK_AND_WARN), refuses a final answer before one of
    ``answer_after`` ran, and stops when a ``stop_on_result`` tool returns "fraud"."""
    parts = ["spec adapter_rules", TOOLS]
    for tool in block:
        parts.append(
            f'constraint no_{tool} severity SOFT_BLOCK(9) message "not allowed" := G !{tool}'
        )
    for tool in stop:
        parts.append(f'constraint never_{tool} severity HARD_STOP message "never" := G !{tool}')
    for tool in warn:
        parts.append(
            f'constraint careful_{tool} severity BLOCK_AND_WARN message "are you sure?" := G !{tool}'
        )
    after = list(answer_after)
    if after:
        done = " | ".join(f"O {t}" for t in after)
        parts.append(
            'constraint answer_after severity SOFT_BLOCK(9) message "look it up first" '
            f":= G(final_answer -> ({done}))"
        )
    for tool in stop_on_result:
        parts.append(
            f'constraint clean_{tool} severity HARD_STOP message "bad result" '
            f":= G !{tool}(result ~ /fraud/)"
        )
    return parse_spec("\n".join(parts), source="adapter_rules.ltl")
