"""Installing the OpenAI Agents guard on an agent and every agent it hands off to: the
guarded function tools (input guardrail first, wrapped invoker), the hooks that
batch-propose each model turn, the output guardrail, and handoffs followed at run time."""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from agentguard.errors import MissingExtraError
from agentguard.guard import UnsupportedAgentError

try:
    from agents import Agent, AgentHooks, FunctionTool, Handoff
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

if TYPE_CHECKING:
    from .openai_agents import OpenAIAgentsGuard

ATTRIBUTE: Final = "agentguard"
"""The attribute of a guarded agent holding its :class:`OpenAIAgentsGuard`."""


class GuardedInvoker:
    """``on_invoke_tool`` of a guarded copy; other attributes are the SDK invoker's."""

    def __init__(self, inner: Callable[[Any, str], Awaitable[Any]], guard: OpenAIAgentsGuard):
        self._inner = inner
        self._guard = guard

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __call__(self, context: Any, raw_args: str) -> Any:
        return await self._guard.invoke(self._inner, context, raw_args)


class GuardHooks(AgentHooks[Any]):
    """Batch-proposes each model turn's calls; every event reaches the agent's own hooks."""

    def __init__(self, guard: OpenAIAgentsGuard, agent: Any, inner: Any) -> None:
        self.guard = guard
        self.agent = agent
        self.inner = inner

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        names = {t.name for t in self.agent.tools if isinstance(t, FunctionTool)}
        calls = []
        for item in response.output:
            if getattr(item, "type", None) == "function_call" and item.name in names:
                try:
                    args = json.loads(item.arguments or "{}")
                except ValueError:
                    continue  # the SDK refuses it; a call that never runs is not proposed
                if isinstance(args, dict):
                    calls.append((str(item.name), args, str(item.call_id)))
        self.guard.run_of(context).propose_turn(calls)
        if self.inner is not None:
            await self.inner.on_llm_end(context, agent, response)

    async def on_start(self, context: Any, agent: Any) -> None:
        self.guard.run_of(context)
        if self.inner is not None:
            await self.inner.on_start(context, agent)

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        if self.inner is not None:
            await self.inner.on_end(context, agent, output)

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        if self.inner is not None:
            await self.inner.on_handoff(context, agent, source)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        if self.inner is not None:
            await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        if self.inner is not None:
            await self.inner.on_tool_end(context, agent, tool, result)

    async def on_llm_start(self, context: Any, agent: Any, system: Any, items: Any) -> None:
        if self.inner is not None:
            await self.inner.on_llm_start(context, agent, system, items)


def agent_tool_schemas(agent: Any) -> dict[str, Any] | None:
    """The function tools of ``agent`` and of every agent its handoffs reach (name -> JSON
    Schema), for the firewall's comparison with the spec's tools; None when a handoff is
    built at run time (its target's tools cannot be known before the run)."""
    out: dict[str, Any] = {}
    seen: set[int] = set()
    todo = [agent]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for tool in current.tools:
            if isinstance(tool, FunctionTool):
                out[tool.name] = tool.params_json_schema
        for target in current.handoffs:
            if not isinstance(target, Agent):
                return None
            todo.append(target)
    return out


def install(agent: Any, guard: OpenAIAgentsGuard) -> None:
    """Guard one agent, then the agents its handoffs name (once each)."""
    if getattr(agent, ATTRIBUTE, None) is guard:
        return
    _refuse_ungated(agent)
    setattr(agent, ATTRIBUTE, guard)
    agent.tools = [_guarded_tool(t, guard) for t in agent.tools]
    agent.output_guardrails = [*agent.output_guardrails, guard.output_guardrail]
    agent.hooks = GuardHooks(guard, agent, agent.hooks)
    agent.handoffs = [_followed(h, guard) for h in agent.handoffs]
    for target in agent.handoffs:
        if isinstance(target, Agent):
            install(target, guard)


def _refuse_ungated(agent: Any) -> None:
    others = [type(t).__name__ for t in agent.tools if not isinstance(t, FunctionTool)]
    if others:
        raise UnsupportedAgentError(
            f"agent {agent.name!r} has tools agentguard cannot gate ({', '.join(others)}: they "
            "run outside this process); give it function tools only"
        )
    if agent.mcp_servers:
        raise UnsupportedAgentError(
            f"agent {agent.name!r} has mcp_servers, whose tools are listed at run time out of "
            "the guard's reach; put `agentguard mcp-proxy SPEC -- SERVER` in front of the server"
        )


def _guarded_tool(tool: FunctionTool, guard: OpenAIAgentsGuard) -> FunctionTool:
    guard.declare(tool)
    copied = copy.copy(tool)  # the SDK's own copy: rebinds the invoker to the copy
    copied.tool_input_guardrails = [guard.input_guardrail, *(tool.tool_input_guardrails or [])]
    copied.on_invoke_tool = GuardedInvoker(copied.on_invoke_tool, guard)
    return copied


def _followed(target: Any, guard: OpenAIAgentsGuard) -> Any:
    """A ``Handoff`` whose target agent is guarded when the handoff happens."""
    if not isinstance(target, Handoff):
        return target
    inner = target.on_invoke_handoff

    async def invoke(context: Any, raw_args: str) -> Any:
        agent = await inner(context, raw_args)
        if isinstance(agent, Agent) and getattr(agent, ATTRIBUTE, None) is not guard:
            install(agent, guard)
        return agent

    followed = copy.copy(target)
    followed.on_invoke_handoff = invoke
    return followed


__all__ = ["ATTRIBUTE", "GuardHooks", "GuardedInvoker", "agent_tool_schemas", "install"]
