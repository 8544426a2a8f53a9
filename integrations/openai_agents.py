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

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
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
from ._openai_agents_install import ATTRIBUTE, agent_tool_schemas, install
from ._openai_agents_run import AgentRun as _Run
from ._openai_agents_run import arguments_of, jsonable, text_of

try:
    from agents import (
        Agent,
        FunctionTool,
        GuardrailFunctionOutput,
        OutputGuardrail,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

_KEEP_CLOSED: Final = 256  # finished runs remembered for their late events

_HANDLED_FAILURE: Final = "_function_tool_default_failure_handled"
"""Set on a ToolContext by the SDK when its default failure handler answered an exception
(read, never consumed: the SDK consumes it after the invoker returns)."""


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
        args = arguments_of(context.tool_arguments)
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
        answer = jsonable(output)
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
            decision = run.decision(context.tool_name, arguments_of(raw_args), context.tool_call_id)
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
        value = jsonable(result)
        run.ran(decision, value, error=text_of(value) if failed else None)
        return result


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
    install(agent, guard)
    return agent


__all__ = ["ATTRIBUTE", "OpenAIAgentsGuard", "guard_openai_agent"]
