"""Guard an OpenAI Agents SDK ``agents.Agent`` (openai-agents 0.24).

``agentguard.guard(agent, spec)`` (or :func:`guard_openai_agent`) returns the same agent
with, on it and on every agent it can hand off to:

* every ``FunctionTool`` replaced by a copy carrying agentguard's tool input guardrail
  (first in ``tool_input_guardrails``) and a wrapped invoker. The SDK runs the guardrail
  before the function: a refused call is rejected with ``reject_content``, so the
  function never runs and the model receives the refusal text (the one every adapter
  sends); a HARD_STOP uses ``raise_exception``, so ``Runner.run`` raises the SDK's
  ``ToolInputGuardrailTripwireTriggered`` (its ``output.output_info`` is the Decision);
* agent hooks (chained with the agent's own ``hooks``) whose ``on_llm_end`` proposes a
  model turn's function calls as one batch (``propose_batch``, keyed by ``call_id``)
  before any of them runs, so parallel calls are judged in the model's order;
* an output guardrail that proposes the final output as ``final_answer``: allowed, it
  is recorded and the run is finished (report, log); refused, the tripwire ends the run
  with ``OutputGuardrailTripwireTriggered`` (the SDK cannot send an answer back to the
  model) and the run is finished too;
* a handoff is not a tool call: agents listed in ``handoffs`` are guarded with the same
  guard, and a ``Handoff`` whose target is built at run time is guarded when it is
  invoked, so the run's trace continues into the next agent.

One firewall per run, found from any hook or guardrail by the run's ``Usage`` object
(the SDK shares it between the run's context and each tool's context), so concurrent
``Runner.run`` calls on one agent never mix. ``agent.agentguard`` is the
:class:`OpenAIAgentsGuard`: ``.report`` / ``.trace`` / ``.attempts`` of the last finished
run, ``.running`` for runs that ended by an exception before their final output
(``finish_running()`` finishes them).

A function that raises is answered by the SDK's default failure handler with an error
text; the call enters the trace with that text and marked as an error. Hosted tools
(web search, computer, ...) and ``mcp_servers`` run where agentguard cannot gate them:
such an agent is refused (put ``agentguard mcp-proxy`` in front of an MCP server).
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from typing_extensions import Unpack

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.options import FirewallOptions
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, AlreadyGuardedError, UnsupportedAgentError, blocked_text
from agentguard.language import ast as A
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.trace.model import Trace

from ._json_schema import declaration, with_declarations

try:
    import anyio
    from agents import (
        Agent,
        AgentHooks,
        FunctionTool,
        GuardrailFunctionOutput,
        Handoff,
        OutputGuardrail,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

ATTRIBUTE: Final = "agentguard"
"""The attribute of a guarded agent holding its :class:`OpenAIAgentsGuard`."""

_KEEP_CLOSED: Final = 256  # finished runs remembered for their late events

_HANDLED_FAILURE: Final = "_function_tool_default_failure_handled"
"""Set on a ToolContext by the SDK when its default failure handler answered an exception
(read, never consumed: the SDK consumes it after the invoker returns)."""


# ---------------------------------------------------------------- the seam
class _Run:
    """One run's firewall: batch proposals, start, then complete or withdraw; finish.

    The only place the adapter talks to the firewall. ``start`` may wait for calls it
    relied on, so it runs in a worker thread, off the event loop they finish on.
    """

    def __init__(self, firewall: Firewall) -> None:
        self.firewall = firewall
        self.report: FirewallReport | None = None
        self._proposed: dict[str, Decision] = {}  # call_id -> decision not started yet
        self._started: dict[str, Decision] = {}  # call_id -> decision whose body may run
        self._lock = threading.Lock()

    def propose_turn(self, calls: Sequence[tuple[str, dict[str, Any], str]]) -> None:
        """A model turn's function calls, judged in order before any runs."""
        with self._lock:
            self._sweep("the SDK did not run it (another guardrail, or its arguments, refused it)")
            if calls and self.report is None:
                for decision in self.firewall.propose_batch(list(calls)):
                    if decision.tool_call_id is not None:
                        self._proposed[decision.tool_call_id] = decision

    def decision(self, name: str, args: dict[str, Any], call_id: str) -> Decision:
        """The turn's decision for this call, or a fresh one if the turn did not list it."""
        with self._lock:
            found = self._proposed.pop(call_id, None)
            if found is not None:
                return found
            if self.report is not None:
                return _after_finish(name, args)
            return self.firewall.propose(name, args, tool_call_id=call_id)

    async def start(self, decision: Decision) -> Decision:
        """The decision to act on as the body is about to run (a refusal is withdrawn)."""
        if self.report is not None:
            return _after_finish(decision.tool, dict(decision.args))
        started: Decision = await anyio.to_thread.run_sync(self.firewall.start, decision)
        if started.executes and started.tool_call_id is not None:
            with self._lock:
                self._started[started.tool_call_id] = started
        return started

    def take_started(self, call_id: str) -> Decision | None:
        with self._lock:
            return self._started.pop(call_id, None)

    def ran(self, decision: Decision, result: Any, *, error: str | BaseException | None) -> None:
        with self._lock:
            if self.report is None:
                self.firewall.complete(decision, result, error=error)

    def finish(self) -> FirewallReport:
        with self._lock:
            if self.report is None:
                self._sweep("the run ended before it ran")
                self.report = self.firewall.finish()
            return self.report

    def _sweep(self, reason: str) -> None:
        for decision in self._proposed.values():
            if decision.executes and self.firewall.is_in_flight(decision):
                self.firewall.withdraw(decision, reason)
        self._proposed.clear()

    @property
    def stopped(self) -> bool:
        return self.firewall.stopped


def _after_finish(name: str, args: dict[str, Any]) -> Decision:
    message = "agentguard stopped the run; this call was not executed."
    return Decision(Action.STOP, name, args, message=message)


# ---------------------------------------------------------------- the guard
class OpenAIAgentsGuard:
    """The guard state shared by a guarded agent and the agents it hands off to."""

    def __init__(
        self,
        spec: SpecLike,
        *,
        schema_checks: bool = True,
        **firewall_kwargs: Unpack[FirewallOptions],
    ) -> None:
        self.spec: A.Spec = coerce_spec(spec, firewall_kwargs.get("registry"))
        self.schema_checks = schema_checks
        self.firewall_kwargs = firewall_kwargs
        self.reports: list[FirewallReport] = []
        self._declared: dict[str, A.ToolDecl] = {}
        self._runs: dict[int, tuple[Any, _Run]] = {}
        # finished runs, so a late event of one (a sibling's guardrail after a STOP) finds
        # it finished instead of starting a new run; the Usage is kept, so ids stay unique
        self._closed: OrderedDict[int, tuple[Any, _Run]] = OrderedDict()
        self._lock = threading.Lock()
        self.input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            self._check_call, name="agentguard"
        )
        self.output_guardrail: OutputGuardrail[Any] = OutputGuardrail(
            self._check_answer, name="agentguard_final_answer"
        )

    # runs --------------------------------------------------------------------------
    def run_of(self, context: Any) -> _Run:
        """The run ``context`` (a run, hook or tool context) belongs to; started on first use."""
        usage = context.usage
        with self._lock:
            closed = self._closed.get(id(usage))
            if closed is not None and closed[0] is usage:
                return closed[1]
            entry = self._runs.get(id(usage))
            if entry is None or entry[0] is not usage:
                spec = self.spec
                if self.schema_checks:
                    spec = with_declarations(spec, self._declared.values())
                options: FirewallOptions = {"keep_trace": True, **self.firewall_kwargs}
                entry = (usage, _Run(Firewall(spec, **options)))  # a run's trace is kept
                self._runs[id(usage)] = entry
            return entry[1]

    def end(self, context: Any) -> FirewallReport:
        """Finish the run of ``context``: deferred constraints, the log, the report."""
        run = self.run_of(context)
        with self._lock:
            entry = self._runs.pop(id(context.usage), None)
            first = entry is not None  # only the first end of a run reports it
            if entry is not None:
                self._closed[id(context.usage)] = entry
                while len(self._closed) > _KEEP_CLOSED:
                    self._closed.popitem(last=False)
        report = run.finish()
        if first:
            self.reports.append(report)
        return report

    @property
    def running(self) -> tuple[Firewall, ...]:
        """Firewalls of runs that started and have not finished (ended by an exception)."""
        with self._lock:
            return tuple(run.firewall for _, run in self._runs.values())

    def finish_running(self) -> list[FirewallReport]:
        """Finish the runs an exception ended before their final output."""
        with self._lock:
            runs = [run for _, run in self._runs.values()]
            self._closed.update(self._runs)
            self._runs.clear()
            while len(self._closed) > _KEEP_CLOSED:
                self._closed.popitem(last=False)
        done = [run.finish() for run in runs]
        self.reports.extend(done)
        return done

    @property
    def report(self) -> FirewallReport | None:
        """The last finished run's report (None before any)."""
        return self.reports[-1] if self.reports else None

    @property
    def trace(self) -> Trace:
        return self.report.trace if self.report is not None else Trace()

    @property
    def attempts(self) -> tuple[Decision, ...]:
        return self.report.decisions if self.report is not None else ()

    def declare(self, tool: FunctionTool) -> None:
        self._declared.setdefault(tool.name, declaration(tool.name, tool.params_json_schema))

    # the SDK's guardrails ----------------------------------------------------------
    async def _check_call(self, data: Any) -> ToolGuardrailFunctionOutput:
        context = data.context
        run = self.run_of(context)
        args = _arguments(context.tool_arguments)
        decision = run.decision(context.tool_name, args, context.tool_call_id)
        if decision.executes:
            decision = await run.start(decision)
        if decision.action is Action.STOP:
            self.end(context)  # the tripwire ends the run: no later hook will
            return ToolGuardrailFunctionOutput.raise_exception(output_info=decision)
        if not decision.executes:
            return ToolGuardrailFunctionOutput.reject_content(
                blocked_text(decision), output_info=decision
            )
        return ToolGuardrailFunctionOutput.allow(output_info=decision)

    async def _check_answer(self, context: Any, agent: Any, output: Any) -> GuardrailFunctionOutput:
        del agent
        run = self.run_of(context)
        answer = _jsonable(output)
        decision = run.decision(FINAL_TOOL, {"answer": answer}, f"final:{id(output)}")
        if decision.executes:
            decision = await run.start(decision)
            if decision.executes:
                run.ran(decision, answer, error=None)
        self.end(context)
        return GuardrailFunctionOutput(
            output_info=decision, tripwire_triggered=not decision.executes
        )

    # the wrapped invoker -----------------------------------------------------------
    async def invoke(
        self, inner: Callable[[Any, str], Awaitable[Any]], context: Any, raw_args: str
    ) -> Any:
        """Run the function of an allowed, started call, then complete it."""
        run = self.run_of(context)
        decision = run.take_started(context.tool_call_id)
        if decision is None:  # the guardrail did not run (e.g. approval flows): check here
            decision = run.decision(context.tool_name, _arguments(raw_args), context.tool_call_id)
            if decision.executes:
                decision = await run.start(decision)
                run.take_started(context.tool_call_id)
            if not decision.executes:
                return blocked_text(decision)
        try:
            result = await inner(context, raw_args)
        except BaseException as exc:
            run.ran(decision, None, error=exc)
            raise
        failed = bool(getattr(context, _HANDLED_FAILURE, False))
        value = _jsonable(result)
        run.ran(decision, value, error=_text(value) if failed else None)
        return result


class _GuardedInvoker:
    """``on_invoke_tool`` of a guarded copy; other attributes are the SDK invoker's."""

    def __init__(self, inner: Callable[[Any, str], Awaitable[Any]], guard: OpenAIAgentsGuard):
        self._inner = inner
        self._guard = guard

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __call__(self, context: Any, raw_args: str) -> Any:
        return await self._guard.invoke(self._inner, context, raw_args)


class _Hooks(AgentHooks[Any]):
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


# ---------------------------------------------------------------- installing
def guard_openai_agent(
    agent: Any, spec: SpecLike, **firewall_kwargs: Unpack[FirewallOptions]
) -> Any:
    """Guard ``agent`` (and the agents it hands off to) in place; returns it."""
    if not isinstance(agent, Agent):
        raise UnsupportedAgentError(f"expected an agents.Agent, got {type(agent).__qualname__}")
    if isinstance(getattr(agent, ATTRIBUTE, None), OpenAIAgentsGuard):
        raise AlreadyGuardedError(f"agent {agent.name!r} is already guarded")
    schemas = agent_tool_schemas(agent)
    if schemas is not None:
        firewall_kwargs.setdefault("agent_tools", schemas)
    guard = OpenAIAgentsGuard(spec, **firewall_kwargs)
    _install(agent, guard)
    return agent


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


def _install(agent: Any, guard: OpenAIAgentsGuard) -> None:
    """Guard one agent, then the agents its handoffs name (once each)."""
    if getattr(agent, ATTRIBUTE, None) is guard:
        return
    _refuse_ungated(agent)
    setattr(agent, ATTRIBUTE, guard)
    agent.tools = [_guarded_tool(t, guard) for t in agent.tools]
    agent.output_guardrails = [*agent.output_guardrails, guard.output_guardrail]
    agent.hooks = _Hooks(guard, agent, agent.hooks)
    agent.handoffs = [_followed(h, guard) for h in agent.handoffs]
    for target in agent.handoffs:
        if isinstance(target, Agent):
            _install(target, guard)


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
    copied.on_invoke_tool = _GuardedInvoker(copied.on_invoke_tool, guard)
    return copied


def _followed(target: Any, guard: OpenAIAgentsGuard) -> Any:
    """A ``Handoff`` whose target agent is guarded when the handoff happens."""
    if not isinstance(target, Handoff):
        return target
    inner = target.on_invoke_handoff

    async def invoke(context: Any, raw_args: str) -> Any:
        agent = await inner(context, raw_args)
        if isinstance(agent, Agent) and getattr(agent, ATTRIBUTE, None) is not guard:
            _install(agent, guard)
        return agent

    followed = copy.copy(target)
    followed.on_invoke_handoff = invoke
    return followed


def _arguments(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def _jsonable(value: Any) -> Any:
    """A tool's return value or a final output as the trace keeps it (JSON-able)."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = ["ATTRIBUTE", "OpenAIAgentsGuard", "guard_openai_agent"]
