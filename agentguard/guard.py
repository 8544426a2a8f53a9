"""``agentguard.guard(agent, spec)``: one line to put an agent behind the firewall.

:func:`guard` dispatches on the agent's type to an adapter in ``agentguard.integrations``.
The adapters share :class:`~agentguard.session.GuardSession` (the run's firewall,
attempts and report) and, from the leaf :mod:`agentguard.guard_shared`, the options,
guarding errors and refusal texts; both are re-exported here, where adapters look.
"""

from __future__ import annotations

import importlib
from typing import TypeVar

from typing_extensions import Unpack

from agentguard.guard_shared import (
    EXECUTING,
    AlreadyGuardedError,
    DecisionListener,
    FirewallFactory,
    GuardOptions,
    UnsupportedAgentError,
    blocked_text,
    stop_decision,
)
from agentguard.scoring.inputs import SpecLike
from agentguard.session import GuardSession
from agentguard.trace.final_tool import FINAL_TOOL

AgentT = TypeVar("AgentT")


SUPPORTED = (
    "smolagents.ToolCallingAgent and smolagents.CodeAgent: agentguard.guard(agent, spec)",
    "langchain.agents.create_agent: middleware=[AgentGuardMiddleware(spec)] "
    "from agentguard.integrations.langchain",
    "langgraph ToolNode: ToolNode(tools, wrap_tool_call=guard_tool_node(spec)) "
    "from agentguard.integrations.langchain",
    "agents.Agent (OpenAI Agents SDK): agentguard.guard(agent, spec)",
)


def guard(agent: AgentT, spec: SpecLike, **options: Unpack[GuardOptions]) -> AgentT:
    """Guard ``agent`` with ``spec`` (a Spec or a path to a ``.ltl`` file); returns the agent.

    ``options`` are the Firewall's keyword options (:class:`FirewallOptions`) and the
    session's (``firewall_factory``, ``on_decision``), checked by mypy at this call:
    ``mode="shadow"`` decides and logs every call as enforcement would but refuses none
    (docs/firewall.md, "Shadow mode"); ``approver`` answers for calls that would violate
    an ``ASK`` constraint ("Human approval"). The guard state is reachable afterwards as
    ``agent.agentguard``.
    """
    module = type(agent).__module__
    if module.startswith("smolagents"):
        adapter = importlib.import_module("agentguard.integrations.smolagents")
        guarded: AgentT = adapter.guard_smolagents(agent, spec, **options)
        return guarded
    if module == "agents" or module.startswith("agents."):  # the OpenAI Agents SDK
        adapter = importlib.import_module("agentguard.integrations.openai_agents")
        openai_agent: AgentT = adapter.guard_openai_agent(agent, spec, **options)
        return openai_agent
    if module.startswith(("langchain", "langgraph")):
        raise UnsupportedAgentError(
            f"{type(agent).__qualname__} is guarded with middleware, not by wrapping: "
            "create_agent(model, tools, middleware=[AgentGuardMiddleware(spec)]) "
            "(from agentguard.integrations.langchain import AgentGuardMiddleware), or for a "
            "LangGraph ToolNode, ToolNode(tools, wrap_tool_call=guard_tool_node(spec))."
        )
    raise UnsupportedAgentError(
        f"agentguard.guard does not know how to guard {module}.{type(agent).__qualname__}. "
        "Supported:\n  " + "\n  ".join(SUPPORTED)
    )


__all__ = [
    "EXECUTING",
    "FINAL_TOOL",
    "SUPPORTED",
    "AlreadyGuardedError",
    "DecisionListener",
    "FirewallFactory",
    "GuardOptions",
    "GuardSession",
    "UnsupportedAgentError",
    "blocked_text",
    "guard",
    "stop_decision",
]
