"""Guard a LangChain v1 agent (``create_agent``) or a LangGraph ``ToolNode``.

``AgentGuardMiddleware(spec, **firewall_kwargs)`` plugs into
``create_agent(model, tools, middleware=[...])``:

* ``before_agent`` starts a fresh firewall for the run; ``after_agent`` finishes it
  (deferred constraints are evaluated there, also when the run was ended early);
* ``after_model`` (``can_jump_to=["end", "model"]``) sees each model turn before any tool
  runs: a batch of tool calls is checked at once (``propose_batch``), and a STOP ends the
  run (``jump_to: "end"``) with an error ``ToolMessage`` per call, so no call runs. A turn
  without tool calls is the final answer, proposed as ``final_answer``; a refused answer
  is sent back to the model (``jump_to: "model"``);
* ``wrap_tool_call`` / ``awrap_tool_call`` return a ``ToolMessage(status="error")`` for a
  blocked call without calling the handler, so the tool never runs and the model reads
  why. (``Command(goto="__end__")`` from there would not end the run: that is why STOP
  is handled in ``after_model``.)

``guard_tool_node(spec)`` builds a ``ToolNode(wrap_tool_call=..., awrap_tool_call=...)``
wrapper for hand-built LangGraph graphs; there a STOP raises
:class:`agentguard.errors.RunStopped` out of ``graph.invoke``.

Either object's ``.agentguard`` is the :class:`~agentguard.guard.GuardSession` (trace,
attempts, report, log path).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentguard.enforcement.decision import Action, Decision
from agentguard.errors import MissingExtraError, RunStopped
from agentguard.guard import FINAL_TOOL, GuardSession, blocked_text
from agentguard.trace.model import decode_result

try:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc

try:
    from langchain.agents.middleware import AgentMiddleware, hook_config
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


class _ToolGate:
    """The tool-call check shared by the middleware and the ToolNode wrapper."""

    def __init__(self, session: GuardSession) -> None:
        self.session = session

    def before(self, request: Any) -> tuple[str, dict[str, Any], Any | None]:
        """Propose the call; returns the refusal ToolMessage when it must not run."""
        call = request.tool_call
        name, args = str(call["name"]), dict(call.get("args") or {})
        decision = self.session.propose(name, args)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            return name, args, _refusal(decision, call.get("id"))
        return name, args, None

    def after(self, name: str, args: Mapping[str, Any], outcome: Any) -> Any:
        self.session.record(name, args, _result_of(outcome))
        return outcome

    def wrap(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            name, args, refusal = self.before(request)
            if refusal is not None:
                return refusal
            return self.after(name, args, handler(request))
        except RunStopped:
            self.session.finish_run()  # the graph will not reach after_agent
            raise

    async def awrap(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        try:
            name, args, refusal = self.before(request)
            if refusal is not None:
                return refusal
            return self.after(name, args, await handler(request))
        except RunStopped:
            self.session.finish_run()
            raise


def _refusal(decision: Decision, call_id: Any) -> ToolMessage:
    return ToolMessage(
        content=blocked_text(decision),
        tool_call_id=str(call_id),
        name=decision.tool,
        status="error",
    )


def _not_run(stop: Decision, call: Mapping[str, Any]) -> ToolMessage:
    return ToolMessage(
        content=f"agentguard did not run {call['name']}: the run was stopped at {stop.tool}",
        tool_call_id=str(call.get("id")),
        name=str(call["name"]),
        status="error",
    )


def _result_of(outcome: Any) -> Any:
    """The result a spec sees: a ToolMessage's content, JSON text decoded."""
    if isinstance(outcome, ToolMessage):
        content = outcome.content
        if isinstance(content, list):
            content = "\n".join(
                str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content
            )
        return decode_result(content)
    return repr(outcome)


def _text(message: AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)


class AgentGuardMiddleware(AgentMiddleware):
    """Put a ``create_agent`` agent behind the firewall for ``spec``.

    One middleware object guards one run at a time; its ``.agentguard`` session holds
    the last run's trace, attempts and report.
    """

    def __init__(self, spec: Any, **firewall_kwargs: Any) -> None:
        super().__init__()
        self.agentguard = GuardSession(spec, **firewall_kwargs)
        self._gate = _ToolGate(self.agentguard)

    # run lifecycle ----------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:  # noqa: ARG002
        self.agentguard.start_run()
        return None

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:  # noqa: ARG002
        self.agentguard.finish_run()
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # each model turn, before any tool runs ----------------------------------------------
    @hook_config(can_jump_to=["end", "model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:  # noqa: ARG002
        messages = state["messages"]
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return None
        if last.tool_calls:
            return self._check_batch(last)
        return self._check_answer(last)

    @hook_config(can_jump_to=["end", "model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def _check_batch(self, message: AIMessage) -> dict[str, Any] | None:
        calls = [(str(c["name"]), dict(c.get("args") or {})) for c in message.tool_calls]
        decisions = self.agentguard.propose_batch(calls)
        stop = next((d for d in decisions if d.action is Action.STOP), None)
        if stop is None:
            return None
        self.agentguard.clear_predecided()
        replies: list[Any] = [
            _refusal(stop, c.get("id")) if (d is stop) else _not_run(stop, c)
            for c, d in zip(message.tool_calls, decisions, strict=True)
        ]
        replies.append(AIMessage(content=blocked_text(stop)))
        return {"messages": replies, "jump_to": "end"}

    def _check_answer(self, message: AIMessage) -> dict[str, Any] | None:
        args = {"answer": _text(message)}
        decision = self.agentguard.propose(FINAL_TOOL, args)
        if decision.action is Action.STOP:
            return {"messages": [AIMessage(content=blocked_text(decision))], "jump_to": "end"}
        if not decision.executes:
            note = HumanMessage(content=blocked_text(decision), name="agentguard")
            return {"messages": [note], "jump_to": "model"}
        self.agentguard.record(FINAL_TOOL, args, args["answer"])
        return None

    # each tool call -----------------------------------------------------------------
    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._gate.wrap(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await self._gate.awrap(request, handler)


class ToolNodeGuard:
    """``wrap_tool_call`` / ``awrap_tool_call`` for a LangGraph ``ToolNode``.

    A hand-built graph has no run boundaries agentguard can see: the first call starts
    a run; call :meth:`finish` for the report, which also readies the next run.
    """

    def __init__(self, spec: Any, **firewall_kwargs: Any) -> None:
        self.agentguard = GuardSession(spec, **firewall_kwargs)
        self._gate = _ToolGate(self.agentguard)

    def __call__(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._gate.wrap(request, handler)

    async def awrap(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await self._gate.awrap(request, handler)

    def propose_answer(self, answer: Any) -> Decision:
        """Check a final answer (call it where your graph ends); records it if allowed."""
        args = {"answer": answer}
        decision = self.agentguard.propose(FINAL_TOOL, args)
        if decision.executes:
            self.agentguard.record(FINAL_TOOL, args, answer)
        return decision

    def finish(self) -> Any:
        """End the run: deferred constraints are evaluated; returns the FirewallReport."""
        return self.agentguard.finish_run()

    def tool_node_kwargs(self) -> dict[str, Any]:
        """``ToolNode(tools, **guard.tool_node_kwargs())`` wires both sync and async paths."""
        return {"wrap_tool_call": self, "awrap_tool_call": self.awrap}


def guard_tool_node(spec: Any, **firewall_kwargs: Any) -> ToolNodeGuard:
    """A guard for ``ToolNode(tools, wrap_tool_call=guard)``; see :class:`ToolNodeGuard`."""
    return ToolNodeGuard(spec, **firewall_kwargs)


__all__ = ["AgentGuardMiddleware", "ToolNodeGuard", "guard_tool_node"]
