"""Put ``agentguard mcp-proxy`` in front of an MCP server and talk to it as a client would.

This file is both sides: ``python examples/mcp_gateway.py --serve`` is a small MCP
server (the official SDK's ``MCPServer``); ``python examples/mcp_gateway.py`` starts
``agentguard mcp-proxy SPEC -- python examples/mcp_gateway.py --serve`` as a subprocess
and drives it with the SDK's ``ClientSession`` over stdio, the way Claude Desktop or any
MCP client would. The refund is refused until the order was looked up and verified; the
refusal is an MCP tool error the model can read. Offline, no key.

    python examples/mcp_gateway.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from agentguard.testing.printout import print_decision_log

SPEC = """
spec refunds
constraint lookup_first severity SOFT_BLOCK
    message "Look the order up before refunding it."
  := !issue_refund W lookup_order
constraint verified_refund severity SOFT_BLOCK
    message "Refund only an order whose customer was verified."
  := G(issue_refund -> O lookup_order(result.verified = true))
"""


def serve() -> None:
    """The MCP server the proxy starts (``--serve``)."""
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("orders")

    @app.tool()
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        return {"order_id": order_id, "verified": True, "amount": 129.9}

    @app.tool()
    def issue_refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        return f"refunded {amount} EUR on {order_id}"

    app.run()


async def client(spec: Path, log: Path, report: Path, errors: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    proxy = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "agentguard", "mcp-proxy", str(spec)),
            *("--log", str(log), "--report", str(report)),
            *("--", sys.executable, str(Path(__file__).resolve()), "--serve"),
        ],
    )
    with errors.open("w", encoding="utf-8") as errlog:  # the proxy's stderr
        await drive(stdio_client(proxy, errlog), ClientSession)


async def drive(transport: Any, session_type: Any) -> None:
    async with transport as (read, write), session_type(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        print("tools through the proxy:", [t.name for t in listed.tools])
        for name, args in [
            ("issue_refund", {"order_id": "A1042", "amount": 129.9}),  # the mistake
            ("lookup_order", {"order_id": "A1042"}),
            ("issue_refund", {"order_id": "A1042", "amount": 129.9}),  # the correction
        ]:
            result = await session.call_tool(name, args)
            verdict = "BLOCKED" if result.is_error else "ran"
            first = result.content[0]
            text = first.text if first.type == "text" else str(first)
            print(f"  {verdict:>7}  {name}({args}): {text.splitlines()[0]}")


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    spec, log, report = out_dir / "refunds.ltl", out_dir / "decisions.jsonl", out_dir / "r.jsonl"
    spec.write_text(SPEC, encoding="utf-8")
    anyio.run(client, spec, log, report, out_dir / "proxy.stderr.txt")

    (finished,) = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    print("executed:", " -> ".join(finished["tool_sequence"]))
    compliance = finished["compliance"]
    print("compliance:", compliance["compliance_score"], compliance["compliance_label"])
    print_decision_log(log)
    return 0


if __name__ == "__main__":
    if "--serve" in sys.argv[1:]:
        serve()
    else:
        sys.exit(main())
