"""Guard the ToolNode of a hand-built LangGraph graph.

``ToolNode(tools, wrap_tool_call=guard)``: a blocked call is answered with an error
``ToolMessage`` and never runs. A hand-built graph has no run boundaries agentguard can
see, so the example checks the final answer and finishes the run itself. The decision
log is read back with ``json``.

    python examples/langgraph_tool_node.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentguard.integrations.langchain import guard_tool_node
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel, call, if_observed

SPEC = """
spec refunds
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str, amount: number)
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)
"""


@tool
def verify_identity(customer_id: str) -> str:
    """Check the customer's identity."""
    return json.dumps({"customer_id": customer_id, "verified": True})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return json.dumps({"order_id": order_id, "refunded": amount})


def build(model: Any, guard: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([verify_identity, issue_refund], wrap_tool_call=guard))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile()


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    refund = call("issue_refund", order_id="A1042", amount=129.9)
    model = ScriptedChatModel(
        [
            refund,  # the mistake
            if_observed("BLOCKED", call("verify_identity", customer_id="C-77"), refund),
            refund,  # the correction
            "Refunded 129.90 EUR.",
        ]
    )
    guard = guard_tool_node(agentguard.parse_spec(SPEC), log_path=log)
    app = build(model, guard)

    out = app.invoke({"messages": [("user", "Refund order A1042 for customer C-77.")]})
    answer = out["messages"][-1].content
    print("answer:", answer, "| answer allowed:", guard.propose_answer(answer).executes)
    report = guard.finish()
    for decision in guard.agentguard.attempts:
        print(f"  {decision.action.value:>8}  {decision.tool}({dict(decision.args)})")
    print("executed:", " -> ".join(report.trace.names))
    print("compliance:", report.compliance.score, report.compliance.label)

    print(f"decision log {guard.agentguard.log_path}, read with json:")
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        print("  ", {k: record[k] for k in ("event", "action", "tool") if k in record})
    return 0


if __name__ == "__main__":
    sys.exit(main())
