"""A small shop MCP server (official SDK, ``MCPServer``), run over stdio by the tests.

Every tool body appends ``{"tool", "args"}`` to the file named by ``SHOP_RECORD``, so a
test can prove which calls reached the server. ``crash`` kills the process mid-call;
``reserve`` refuses its request with JSON-RPC's invalid params (-32602) before doing
anything, ``charge`` fails with an internal error (-32603) after it charged, and
``slow_charge`` charges, then takes a minute to answer (the tests cancel it), and
``paced_charge`` answers after the seconds it is given.
"""

from __future__ import annotations

import json
import os
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import Field

app = MCPServer("shop", instructions="A test shop.")
ORDERS = {"A1": {"verified": True, "amount": 30}, "B2": {"verified": False, "amount": 80}}


def _ran(tool: str, **args: object) -> None:
    path = os.environ.get("SHOP_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": tool, "args": args}) + "\n")


@app.tool()
def lookup_order(order_id: str) -> dict[str, object]:
    """Look an order up; its result says whether the customer was verified."""
    _ran("lookup_order", order_id=order_id)
    if order_id not in ORDERS:
        raise ToolError(f"no order {order_id}")
    return {"order_id": order_id, **ORDERS[order_id]}


@app.tool()
def issue_refund(order_id: str, amount: Annotated[float, Field(ge=0)]) -> str:
    """Refund an order."""
    _ran("issue_refund", order_id=order_id, amount=amount)
    return f"refunded {amount} on {order_id}"


@app.tool()
def wipe_database() -> str:
    """Delete everything."""
    _ran("wipe_database")
    return "wiped"


@app.tool()
def crash() -> str:
    """Kill the server in the middle of the call."""
    _ran("crash")
    os._exit(3)


@app.tool()
def reserve(slot: str) -> str:
    """Reserve a slot; this server refuses every reservation as an invalid request."""
    raise MCPError(code=-32602, message=f"no slot {slot}")


@app.tool()
def charge(order_id: str) -> str:
    """Charge an order; the charge goes through, then the server fails to answer."""
    _ran("charge", order_id=order_id)
    raise MCPError(code=-32603, message="ledger unavailable")


@app.tool()
async def slow_charge(order_id: str) -> str:
    """Charge an order, then take a minute to confirm it."""
    _ran("slow_charge", order_id=order_id)
    await anyio.sleep(60)
    return f"charged {order_id}"


@app.resource("shop://orders/A1")
def order_a1() -> str:
    """Order A1, as a resource."""
    _ran("read", uri="shop://orders/A1")
    return json.dumps({"order_id": "A1", **ORDERS["A1"]})


@app.resource("secret://vault/key")
def vault_key() -> str:
    """A secret no agent should read."""
    _ran("read", uri="secret://vault/key")
    return "TOPSECRET-42"


@app.tool()
async def paced_charge(order_id: str, seconds: float) -> str:
    """Charge an order, then confirm it after ``seconds``."""
    _ran("paced_charge", order_id=order_id, seconds=seconds)
    await anyio.sleep(seconds)
    return f"charged {order_id}"


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] in (["streamable-http"], ["sse"]):  # shop.py TRANSPORT PORT: over HTTP
        app.run(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]))  # type: ignore[call-overload]
    else:
        app.run()
