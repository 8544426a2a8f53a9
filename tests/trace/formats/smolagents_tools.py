"""The smolagents tools the refused- and rejected-call tests drive their agents with."""

from __future__ import annotations

from smolagents import tool


@tool
def lookup(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: the order
    """
    return f"order {order_id} verified"


@tool
def refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: the order
    """
    return f"refunded {order_id}"
