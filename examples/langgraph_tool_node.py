"""Guard the ToolNode of a hand-built LangGraph graph.

``ToolNode(tools, wrap_tool_call=guard)``: a blocked call is answered with an error
``ToolMessage`` and never runs. A hand-built graph has no run boundaries agentguard can
see, so the example checks the final answer and finishes the run itself. The decision
log is read back with ``json``.

    python examples/langgraph_tool_node.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from agentguard.integrations.langchain import guard_tool_node
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel
from agentguard.testing.printout import print_run
from agentguard.testing.refund_desk import RefundDesk, refund_before_verifying

SPEC = Path(__file__).with_name("refunds.ltl")


def build(model: Any, guard: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    tools = [tool(f) for f in RefundDesk().tools()]  # verify_identity, issue_refund
    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools, wrap_tool_call=guard))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile()


def main(out_dir: Path | None = None) -> int:
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="agentguard-example-"))
    log = out_dir / "decisions.jsonl"
    model = ScriptedChatModel(refund_before_verifying("Refunded 129.90 EUR."))
    guard = guard_tool_node(agentguard.load_spec(SPEC), log_path=log)
    app = build(model, guard)

    out = app.invoke({"messages": [("user", "Refund order A1042 for customer C-77.")]})
    answer = out["messages"][-1].content
    print("answer:", answer, "| answer allowed:", guard.propose_answer(answer).executes)
    report = guard.finish()
    print_run(guard.agentguard.attempts, report.trace, report.compliance, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
