"""The demo's pretend support back-end: deterministic orders, customers and refunds.

Every tool call is written to the shop's ledger (name, arguments, result), so a run
that had no guard still leaves a trace to verify afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ORDERS: dict[str, dict[str, Any]] = {
    "A1042": {"order_id": "A1042", "customer_id": "C-77", "amount": 129.9, "status": "delivered"},
    "A2077": {"order_id": "A2077", "customer_id": "C-12", "amount": 640.0, "status": "delivered"},
}
VERIFIED_CUSTOMERS = frozenset({"C-77", "C-12"})

ResultListener = Callable[[str, dict[str, Any], str], None]


@dataclass
class Shop:
    """Fake data plus a ledger of every call that actually ran."""

    on_result: ResultListener | None = None
    ledger: list[dict[str, Any]] = field(default_factory=list)
    refunded: list[str] = field(default_factory=list)

    def lookup_order(self, order_id: str) -> str:
        order = ORDERS.get(order_id)
        result = json.dumps(order) if order else json.dumps({"error": f"no order {order_id}"})
        return self._log("lookup_order", {"order_id": order_id}, result)

    def verify_identity(self, customer_id: str) -> str:
        verified = customer_id in VERIFIED_CUSTOMERS
        result = json.dumps({"customer_id": customer_id, "verified": verified})
        return self._log("verify_identity", {"customer_id": customer_id}, result)

    def issue_refund(self, order_id: str, amount: float) -> str:
        self.refunded.append(order_id)
        result = json.dumps({"order_id": order_id, "refunded": amount, "status": "refunded"})
        return self._log("issue_refund", {"order_id": order_id, "amount": amount}, result)

    def answer(self, text: str) -> None:
        self._log("final_answer", {"answer": text}, text)

    def _log(self, name: str, args: dict[str, Any], result: str) -> str:
        self.ledger.append({"tool_name": name, "arguments": args, "tool_result": result})
        if self.on_result is not None:
            self.on_result(name, args, result)
        return result


def smolagents_tools(shop: Shop) -> list[Any]:
    """The shop's operations as smolagents tools bound to ``shop``."""
    from smolagents import tool

    def lookup_order(order_id: str) -> str:
        """Look an order up: customer, amount and status.

        Args:
            order_id: The order number, e.g. "A1042".
        """
        return shop.lookup_order(order_id)

    def verify_identity(customer_id: str) -> str:
        """Check that the person asking is the customer who owns the order.

        Args:
            customer_id: The customer id from the order.
        """
        return shop.verify_identity(customer_id)

    def issue_refund(order_id: str, amount: float) -> str:
        """Refund an order.

        Args:
            order_id: The order number.
            amount: The amount to refund, in EUR.
        """
        return shop.issue_refund(order_id, amount)

    return [tool(lookup_order), tool(verify_identity), tool(issue_refund)]


__all__ = ["ORDERS", "Shop", "smolagents_tools"]
