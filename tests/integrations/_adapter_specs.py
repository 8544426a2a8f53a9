"""Small real specs for the adapter tests: one constraint per behaviour under test."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agentguard import Spec, parse_spec
from agentguard.enforcement.decision import Decision, RunStopped

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
    requires: Mapping[str, str] | None = None,
) -> Spec:
    """A spec that blocks ``block`` tools (SOFT_BLOCK, high limit), stops on ``stop`` tools,
    warns on ``warn`` tools (BLOCK_AND_WARN), refuses a final answer before one of
    ``answer_after`` ran, stops when a ``stop_on_result`` tool returns "fraud", and blocks
    each key of ``requires`` (SOFT_BLOCK, high limit) until its value has run."""
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
    for tool, prior in (requires or {}).items():
        parts.append(
            f'constraint {prior}_before_{tool} severity SOFT_BLOCK(9) message "{prior} first" '
            f":= G({tool} -> O {prior})"
        )
    return parse_spec("\n".join(parts), source="adapter_rules.ltl")


def stopped_at(stop: RunStopped) -> str:
    """The tool a RunStopped stopped at (its ``decision`` is typed ``object`` in errors.py)."""
    decision = stop.decision
    if not isinstance(decision, Decision):
        raise TypeError(f"RunStopped carries {type(decision).__name__}, not a Decision")
    return decision.tool
