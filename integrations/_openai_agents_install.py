"""Installing the OpenAI Agents guard on an agent and on every agent it can reach: the
guarded function tools (agentguard's input guardrail first, the wrapped invoker), the
hooks that batch-propose each model turn and keep the agent guarded as it changes, the
output guardrail.

An agent reaches another by a handoff (an ``Agent`` in ``handoffs``, a ``handoff(agent)``
object, or a ``Handoff`` that builds its agent at run time, guarded when invoked) and by
``Agent.as_tool`` (the tool's agent runs inside the call). Tools the guard cannot gate
(hosted tools, computer, shell and patch tools, MCP servers) are refused, at ``guard()``
and whenever they appear on a guarded agent later.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Iterator
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


class OfferedTool:
    """``is_enabled`` of a guarded tool under ``offer="narrow"``: the SDK's dynamic tool
    enabling asks it before each model call; a tool ``propose`` would refuse now is
    disabled (not offered), else the tool's own ``is_enabled`` decides. Only informs:
    a call to it is still judged (docs/firewall.md, "What may run now")."""

    def __init__(self, name: str, own: Any, guard: OpenAIAgentsGuard) -> None:
        self.name = name
        self.own = own
        self.guard = guard

    async def __call__(self, context: Any, agent: Any) -> bool:
        own = self.own
        if callable(own):
            own = own(context, agent)
            if inspect.isawaitable(own):
                own = await own
        if not own:
            return False
        firewall = self.guard.run_of(context).firewall
        if firewall.mode == "shadow":
            return True
        return bool(firewall.permissions([self.name])[self.name].status != "refused")


class GuardedInvoker:
    """``on_invoke_tool`` of a guarded tool; other attributes are the SDK invoker's."""

    def __init__(
        self,
        tool: FunctionTool,
        inner: Callable[[Any, str], Awaitable[Any]],
        guard: OpenAIAgentsGuard,
    ) -> None:
        self.tool = tool
        self.guard = guard
        self.agentguard_inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agentguard_inner, name)

    def __agents_bind_function_tool__(self, tool: FunctionTool) -> GuardedInvoker:
        """A copy of a guarded tool (``copy.copy``, ``tool_namespace``) stays guarded: the
        SDK rebinds the invoker to the copy, and this one rebinds itself too."""
        bind = getattr(self.agentguard_inner, "__agents_bind_function_tool__", None)
        inner = bind(tool) if callable(bind) else self.agentguard_inner
        return GuardedInvoker(tool, inner, self.guard)

    async def __call__(self, context: Any, raw_args: str) -> Any:
        return await self.guard.invoke(self.tool, self.agentguard_inner, context, raw_args)


class ApprovalPolicy:
    """A tool's ``needs_approval`` function, wrapped: a call it sends to a human will not
    run with its turn, so the turn's decision for it is withdrawn at once (a sibling
    that relied on it is judged again now, not after ``start_timeout``); the call is
    judged when it runs, after the approval."""

    def __init__(self, policy: Callable[..., Any], guard: OpenAIAgentsGuard) -> None:
        self.policy = policy
        self.guard = guard

    async def __call__(self, context: Any, params: Any, call_id: str) -> bool:
        needed = self.policy(context, params, call_id)
        if inspect.isawaitable(needed):
            needed = await needed
        if needed:
            self.guard.awaiting_approval(context, call_id)
        return bool(needed)


class GuardHooks(AgentHooks[Any]):
    """Proposes each model turn's calls; keeps the agent guarded; every event reaches
    the agent's own hooks."""

    def __init__(self, guard: OpenAIAgentsGuard, inner: Any) -> None:
        self.guard = guard
        self.inner = inner

    async def on_llm_start(self, context: Any, agent: Any, system: Any, items: Any) -> None:
        install(agent, self.guard)  # tools, handoffs and servers may change between turns
        if self.inner is not None:
            await self.inner.on_llm_start(context, agent, system, items)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        await self.guard.propose_turn(context, agent, response)
        if self.inner is not None:
            await self.inner.on_llm_end(context, agent, response)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        if isinstance(tool, FunctionTool):
            guard_in_place(tool, self.guard)  # a tool added to the agent this very turn
        if self.inner is not None:
            await self.inner.on_tool_start(context, agent, tool)

    async def on_start(self, context: Any, agent: Any) -> None:
        if self.inner is not None:
            await self.inner.on_start(context, agent)

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        if self.inner is not None:
            await self.inner.on_end(context, agent, output)

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        install(agent, self.guard)
        if self.inner is not None:
            await self.inner.on_handoff(context, agent, source)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        if self.inner is not None:
            await self.inner.on_tool_end(context, agent, tool, result)


def reachable(agent: Any) -> Iterator[Any]:
    """``agent`` and every agent it reaches by handoffs and agent tools, once each."""
    seen: set[int] = set()
    todo = [agent]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(_targets(current))


def _targets(agent: Any) -> Iterator[Any]:
    for target in agent.handoffs:
        if isinstance(target, Handoff):
            ref = getattr(target, "_agent_ref", None)  # handoff(agent) keeps its agent
            target = ref() if callable(ref) else None
        if isinstance(target, Agent):
            yield target
    for tool in agent.tools:
        inner = getattr(tool, "_agent_instance", None)  # Agent.as_tool
        if isinstance(tool, FunctionTool) and isinstance(inner, Agent):
            yield inner


def agent_tool_schemas(agent: Any) -> dict[str, Any] | None:
    """The function tools of every agent ``agent`` reaches (name -> JSON Schema), for the
    firewall's comparison with the spec's tools; None when a handoff builds its agent at
    run time (its tools cannot be known before the run)."""
    out: dict[str, Any] = {}
    for current in reachable(agent):
        for target in current.handoffs:
            if isinstance(target, Handoff) and not callable(getattr(target, "_agent_ref", None)):
                return None
        for tool in current.tools:
            if isinstance(tool, FunctionTool):
                out[tool.name] = tool.params_json_schema
    return out


def install(agent: Any, guard: OpenAIAgentsGuard) -> None:
    """Guard every agent ``agent`` reaches; an agent already guarded is checked again
    for tools, handoffs and servers added since (each guarded once)."""
    for current in reachable(agent):
        _refuse_ungated(current)
        owner = getattr(current, ATTRIBUTE, None)
        if owner is not None and owner is not guard:
            raise UnsupportedAgentError(
                f"agent {current.name!r} is guarded by another guard: one agent graph, one "
                "guard (a run's calls must meet one firewall)"
            )
        if owner is None:  # first met: its tools are copied, the originals left alone
            setattr(current, ATTRIBUTE, guard)
            current.tools = [_guarded_copy(t, guard) for t in current.tools]
        else:  # tools added since joined the guarded agent: the turn holds those objects
            for tool in current.tools:
                if isinstance(tool, FunctionTool):
                    guard_in_place(tool, guard)
        # each piece once (a clone of a guarded agent, agent.clone(), shares them already)
        if guard.output_guardrail not in current.output_guardrails:
            current.output_guardrails = [*current.output_guardrails, guard.output_guardrail]
        if not (isinstance(current.hooks, GuardHooks) and current.hooks.guard is guard):
            current.hooks = GuardHooks(guard, current.hooks)
        followed = [_followed(h, guard) for h in current.handoffs]
        if any(a is not b for a, b in zip(followed, current.handoffs, strict=True)):
            current.handoffs = followed


def _refuse_ungated(agent: Any) -> None:
    others = sorted({type(t).__name__ for t in agent.tools if not isinstance(t, FunctionTool)})
    if others:
        raise UnsupportedAgentError(
            f"agent {agent.name!r} has tools agentguard cannot gate ({', '.join(others)}: "
            "hosted tools run on the model provider's servers, and computer, shell and "
            "patch tools run outside the function-tool path the guard checks); give it "
            "function tools only"
        )
    capabilities = [type(c).__name__ for c in getattr(agent, "capabilities", None) or ()]
    if capabilities:  # a SandboxAgent: its capabilities add tools when the run starts
        raise UnsupportedAgentError(
            f"agent {agent.name!r} has sandbox capabilities ({', '.join(capabilities)}) "
            "whose tools (a shell, file edits) are added when the run starts and run out "
            "of the guard's reach; give it capabilities=[] and function tools"
        )
    if agent.mcp_servers:
        raise UnsupportedAgentError(
            f"agent {agent.name!r} has mcp_servers, whose tools are listed at run time out of "
            "the guard's reach; put `agentguard mcp-proxy SPEC -- SERVER` in front of the server"
        )


def _guarded_copy(tool: Any, guard: OpenAIAgentsGuard) -> Any:
    if not isinstance(tool, FunctionTool) or _guarded_by(tool) is guard:
        return tool
    copied = copy.copy(tool)  # the SDK's own copy: rebinds the invoker to the copy
    guard_in_place(copied, guard)
    return copied


def guard_in_place(tool: FunctionTool, guard: OpenAIAgentsGuard) -> None:
    """Put ``tool`` behind ``guard``: its guardrail first, its invoker wrapped (a tool
    that joined a guarded agent after ``guard()``: the turn already holds the object)."""
    owner = _guarded_by(tool)
    if owner is guard:
        return
    if owner is not None:
        raise UnsupportedAgentError(f"tool {tool.name!r} is guarded by another guard")
    guard.declare(tool)
    tool.on_invoke_tool = GuardedInvoker(tool, tool.on_invoke_tool, guard)
    if guard.offer == "narrow" and not isinstance(tool.is_enabled, OfferedTool):
        tool.is_enabled = OfferedTool(tool.name, tool.is_enabled, guard)
    if callable(tool.needs_approval) and not isinstance(tool.needs_approval, ApprovalPolicy):
        tool.needs_approval = ApprovalPolicy(tool.needs_approval, guard)
    others = [g for g in tool.tool_input_guardrails or [] if g is not guard.input_guardrail]
    tool.tool_input_guardrails = [guard.input_guardrail, *others]


def _guarded_by(tool: FunctionTool) -> OpenAIAgentsGuard | None:
    invoker = tool.on_invoke_tool
    return invoker.guard if isinstance(invoker, GuardedInvoker) else None


def _followed(target: Any, guard: OpenAIAgentsGuard) -> Any:
    """A ``Handoff`` whose agent is guarded when the handoff happens (a ``Handoff`` may
    build its agent at run time)."""
    if not isinstance(target, Handoff) or getattr(target, _FOLLOWED, None) is guard:
        return target
    inner = target.on_invoke_handoff

    async def invoke(context: Any, raw_args: str) -> Any:
        agent = await inner(context, raw_args)
        if isinstance(agent, Agent):
            install(agent, guard)
        return agent

    followed = copy.copy(target)
    followed.on_invoke_handoff = invoke
    setattr(followed, _FOLLOWED, guard)
    return followed


_FOLLOWED: Final = "_agentguard_followed"


__all__ = [
    "ATTRIBUTE",
    "ApprovalPolicy",
    "GuardHooks",
    "GuardedInvoker",
    "agent_tool_schemas",
    "guard_in_place",
    "install",
    "reachable",
]
