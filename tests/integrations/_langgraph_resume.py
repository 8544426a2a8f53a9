"""One LangGraph agent run, interrupted for approvals and resumed from a sqlite checkpoint,
phase by phase, each phase with objects of its own (as a new process has): the graph,
the middleware, the checkpointer's connection, the scripted model (which reads from the
checkpoint how far the conversation went). Run as a script, it plays one phase in this
process: ``python -m tests.integrations._langgraph_resume DB LOG ASK... [--first]``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from agentguard.language import parse_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call
from integrations.langchain import AgentGuardMiddleware, interrupt_approver
from tests.integrations.test_langchain_turns import approve

STEPS = 5
SCRIPT: list[Any] = [*(call("step", n=i) for i in range(STEPS)), "all done"]
THREAD: dict[str, Any] = {"configurable": {"thread_id": "T"}}


def spec_text(ask: list[int]) -> str:
    """A spec that names the dialogue (each message must enter the trace once) and asks
    a human before the steps in ``ask``."""
    held = ", ".join(str(n) for n in ask) or "-1"
    return f"""
constraint answered := G(user_message -> F assistant_message)
constraint one_request := G(user_message -> X G !user_message)
constraint in_order := G(step(n = 1) -> O step(n = 0))
constraint held severity ASK := G !step(n in [{held}])
"""


@tool
def step(n: int) -> str:
    """Do step n."""
    return f"step {n} done"


def agent(db: Path, log: Path, ask: list[int], *, interrupts: bool) -> tuple[Any, Any]:
    """The graph and its middleware, fresh, over the sqlite file ``db``; the scripted
    model starts where the checkpoint's conversation is."""
    saver = SqliteSaver(sqlite3.connect(str(db), check_same_thread=False))
    middleware = AgentGuardMiddleware(
        parse_spec(spec_text(ask)),
        log_path=log,
        approver=interrupt_approver if interrupts else approve,
    )
    state = saver.get_tuple(THREAD)
    said = 0
    if state is not None:
        said = sum(isinstance(m, AIMessage) for m in state.checkpoint["channel_values"]["messages"])
    graph = create_agent(
        ScriptedChatModel(SCRIPT[said:]), [step], middleware=[middleware], checkpointer=saver
    )
    return graph, middleware


def phase(
    db: Path, log: Path, ask: list[int], *, first: bool, interrupts: bool = True
) -> tuple[bool, list[list[Any]]]:
    """Play one phase: the user's request (``first``) or an approving resume. Whether the
    run is interrupted again, and its trace so far as the middleware holds it (name and
    arguments of each event)."""
    graph, middleware = agent(db, log, ask, interrupts=interrupts)
    if first:
        out = graph.invoke({"messages": [HumanMessage("do the steps")]}, THREAD)
    else:
        out = graph.invoke(Command(resume={"approved": True, "by": "test"}), THREAD)
    session = middleware.session_for("T")
    calls = [] if session is None else [[c.name, dict(c.args)] for c in session.trace]
    return bool(out.get("__interrupt__")), calls


def play(db: Path, log: Path, ask: list[int], *, interrupts: bool = True) -> list[list[Any]]:
    """The whole run, phase after phase (each with fresh objects); its final trace."""
    interrupted, calls = phase(db, log, ask, first=True, interrupts=interrupts)
    for _ in range(STEPS + 1):
        if not interrupted:
            return calls
        interrupted, calls = phase(db, log, ask, first=False, interrupts=interrupts)
    raise AssertionError("the run was still interrupted after every step")


if __name__ == "__main__":
    db_path, log_path, *rest = sys.argv[1:]
    is_first = "--first" in rest
    asked = [int(a) for a in rest if a != "--first"]
    again, so_far = phase(Path(db_path), Path(log_path), asked, first=is_first)
    print(json.dumps({"interrupted": again, "trace": so_far}))
