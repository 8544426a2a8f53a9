"""The refund desk the runnable examples guard: two tools and a model that errs once.

Every example in ``examples/`` tells one story in its framework: a support agent asked to
refund an order refunds before verifying the customer, is refused, verifies, refunds. The
tools and the scripted model's part are the same in each, so they live here once; each
example keeps what differs (its framework's agent and the one line that guards it).

The tools are plain functions with Google-style docstrings, which smolagents' ``tool``,
LangChain's ``tool`` and the OpenAI Agents SDK's ``function_tool`` all read, so an example
wraps them in its own framework's decorator: ``[tool(f) for f in desk.tools()]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentguard.testing.script import call, if_observed


@dataclass
class RefundDesk:
    """The back-end behind the tools: it records every refund that really ran."""

    refunded: list[str] = field(default_factory=list)

    def tools(self) -> list[Callable[..., str]]:
        """``verify_identity`` and ``issue_refund``, bound to this desk."""

        def verify_identity(customer_id: str) -> str:
            """Check the customer's identity.

            Args:
                customer_id: The customer's id.
            """
            return json.dumps({"customer_id": customer_id, "verified": True})

        def issue_refund(order_id: str, amount: float) -> str:
            """Refund an order.

            Args:
                order_id: The order number.
                amount: The amount in EUR.
            """
            self.refunded.append(order_id)
            return json.dumps({"order_id": order_id, "refunded": amount})

        return [verify_identity, issue_refund]


def refund_before_verifying(answer: Any) -> list[Any]:
    """The scripted model's part for "Refund order A1042 for customer C-77.": refund
    first (the mistake); if told the call was blocked, verify and refund again (the
    correction); then ``answer``.

    ``answer`` is the framework's final step: ``call("final_answer", answer=...)`` for
    smolagents, the text itself for LangChain and the Agents SDK.
    """
    refund = call("issue_refund", order_id="A1042", amount=129.9)
    verify = call("verify_identity", customer_id="C-77")
    return [refund, if_observed("BLOCKED", verify, refund), refund, answer]


__all__ = ["RefundDesk", "refund_before_verifying"]
