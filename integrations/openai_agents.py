"""Guard an OpenAI Agents SDK ``agents.Agent`` (openai-agents 0.24).

``agentguard.guard(agent, spec)`` (or :func:`guard_openai_agent`) returns the same agent
with, on it and on every agent it can reach (handoffs, ``handoff(...)`` objects, agents
used as tools; a ``Handoff`` that builds its agent at run time is guarded when invoked):

* every ``FunctionTool`` replaced by a copy carrying agentguard's tool input guardrail
  (first in ``tool_input_guardrails``) and a wrapped invoker. Each call is judged on its
  arguments *as the function will receive them*: validated by the function's own pydantic
  model (``"9000"`` is ``9000.0`` for an ``amount: float``), defaults filled in
  (:mod:`._openai_agents_args`). A refused call is rejected by the guardrail
  (``reject_content``: the function never runs, the model reads the refusal); a
  HARD_STOP raises the SDK's ``ToolInputGuardrailTripwireTriggered`` (its
  ``output.output_info`` is the Decision). The invoker starts the call right before the
  function, hands the function the checked snapshot (``Decision.arguments()``) as its
  JSON, and completes the call with its result or error;
* agent hooks (chained with the agent's own ``hooks``) whose ``on_llm_end`` proposes a
  model turn's calls as one batch, in the model's order, before any of them runs; a call
  waiting for a human's approval (``needs_approval``) is judged when it runs instead;
* an output guardrail that proposes the final output as ``final_answer``: allowed, it is
  recorded and the run finished; refused, the tripwire ends the run
  (``OutputGuardrailTripwireTriggered``) and the run is finished too.

One firewall per run, with one identity across the run's pauses (:mod:`._openai_agents_runs`):
a run paused for approval and resumed with ``Runner.run(agent, state)`` continues the same
firewall and log chain; a call of a run that ended is refused by that run's firewall and
logged. The turns of an SDK ``Session`` (``Runner.run(agent, input, session=s)``) are one
run (:mod:`._openai_agents_sessions`): each continues the firewall of the session's last
turn, a stopped one stays stopped, until ``next_run(session)``. ``agent.agentguard`` is
the :class:`OpenAIAgentsGuard`: ``.report`` / ``.trace`` / ``.attempts`` of the last
finished run, ``.running`` for runs that paused or ended by an exception
(``finish_running()`` finishes them), ``save_run`` / ``restore_run`` to resume a paused
run in another process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Final

from typing_extensions import Unpack

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.offering import Offer, check_offer
from agentguard.enforcement.options import FirewallOptions
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, AlreadyGuardedError, UnsupportedAgentError, blocked_text
from agentguard.guard_shared import check_agent_tools
from agentguard.language import ast as A
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.trace.model import Trace

from ._json_schema import declaration, with_declarations
from ._openai_agents_args import (
    Prepared,
    failure_reply,
    handed_text,
    handover,
    nested_pause,
    prepare,
    sdk_invoker,
    turn_calls,
    validated_text,
)
from ._openai_agents_install import ATTRIBUTE, agent_tool_schemas, install
from ._openai_agents_persist import continued_run, restored_run, saved_run
from ._openai_agents_receipt import received_as_checked
from ._openai_agents_run import AgentRun, jsonable, text_of
from ._openai_agents_runs import Runs, enclosing, enclosing_call
from ._openai_agents_sessions import (
    KEEP_SESSIONS,
    Sessions,
    refuse_inside_run,
    session_key,
    watch_sessions,
)

try:
    from agents import (
        Agent,
        FunctionTool,
        GuardrailFunctionOutput,
        OutputGuardrail,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailTripwireTriggered,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

_HANDLED_FAILURE: Final = "_function_tool_default_failure_handled"
"""Set on a ToolContext by the SDK when its default failure handler answered an exception
(read, never consumed: the SDK consumes it after the invoker returns)."""

_PREPARED: Final = "_function_tool_arguments"
"""The arguments the SDK's invoker hands the function without validating them again: it
may hold those the SDK prepared while evaluating an approval; agentguard puts there the
ones it validated and compared with the checked snapshot (``handover``)."""


class OpenAIAgentsGuard:
    """The guard state shared by a guarded agent and the agents it reaches."""

    def __init__(
        self,
        spec: SpecLike,
        *,
        schema_checks: bool = True,
        offer: Offer | None = None,
        keep_sessions: int = KEEP_SESSIONS,
        **firewall_kwargs: Unpack[FirewallOptions],
    ) -> None:
        self.spec: A.Spec = coerce_spec(spec, firewall_kwargs.get("registry"))
        self.schema_checks = schema_checks
        self.offer = check_offer(offer)  # tools refused now are disabled (narrow)
        self.firewall_kwargs = firewall_kwargs
        self.reports: list[FirewallReport] = []
        self.roots: list[Any] = []  # the agents guard() was given
        self._declared: dict[str, A.ToolDecl] = {}
        self._schemas: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.sessions = Sessions(keep_sessions)  # .keep may be changed later
        self.runs = Runs(self, self._new_run, lambda run: continued_run(self, run), self.sessions)
        self.input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            self._check_call, name="agentguard"
        )
        self.output_guardrail: OutputGuardrail[Any] = OutputGuardrail(
            self._check_answer, name="agentguard_final_answer"
        )

    # runs --------------------------------------------------------------------------
    def _new_run(self) -> AgentRun:
        """A run's firewall: judged on the user's spec plus a ``tool`` declaration per
        function tool known now (``schema_checks``)."""
        declared = list(self._declared) if self.schema_checks else []
        options: FirewallOptions = {"keep_trace": True, **self.firewall_kwargs}
        return AgentRun(Firewall(self.run_spec(declared), **options), declared)

    def run_spec(self, declared: list[str]) -> A.Spec:
        """The user's spec with the declarations of the ``declared`` function tools."""
        return with_declarations(self.spec, [self._declared[n] for n in declared])

    def declaration_of(self, name: str) -> Any:
        """The JSON Schema of a guarded function tool's arguments."""
        return self._schemas[name]

    def run_of(self, context: Any) -> AgentRun:
        """The run ``context`` (a run, hook or tool context) belongs to."""
        return self.runs.of(context)

    async def end(self, run: AgentRun) -> FirewallReport:
        """Finish ``run`` (off the event loop: it waits for calls still running)."""
        report, first = await asyncio.to_thread(self.runs.end, run)
        if first:
            with self._lock:
                self.reports.append(report)
        return report

    @property
    def running(self) -> tuple[Firewall, ...]:
        """Firewalls of runs that began and have not finished (paused for an approval, or
        ended by an exception before their final output)."""
        return tuple(run.firewall for run in self.runs.live)

    def finish_running(self) -> list[FirewallReport]:
        """Finish the runs that paused or ended by an exception before their final output
        (not from inside a run of the agent: ``GuardControlError``)."""
        refuse_inside_run("finish_running()")
        done = []
        for run in self.runs.live:
            report, first = self.runs.end(run)
            if first:
                done.append(report)
        with self._lock:
            self.reports.extend(done)
        return done

    def next_run(self, session: Any) -> FirewallReport | None:
        """End the run of ``session`` (an SDK ``Session``, or its ``session_id``): its next
        turn starts a new run (a fresh firewall, a new run id), as a new session would. The
        only way a stopped session takes calls again. The report of the run it ended if
        that run was still going on, else None."""
        run = self.runs.next_session_run(session_key(session))
        if run is None:
            return None
        report, first = self.runs.end(run)
        if not first:
            return None
        with self._lock:
            self.reports.append(report)
        return report

    def session_for(self, session: Any) -> Firewall | None:
        """The firewall of the run ``session`` (an SDK ``Session``, or its ``session_id``)
        is in, going on or ended (``.run_id``, ``.stopped``); None if none is kept."""
        run = self.runs.of_session(session_key(session))
        return None if run is None else run.firewall

    def save_run(self, result_or_state: Any) -> dict[str, Any]:
        """The document of the run a paused ``RunResult`` (or its ``RunState``) belongs
        to, for :meth:`restore_run` in the process that resumes it."""
        return saved_run(self, result_or_state)

    def restore_run(self, document: dict[str, Any]) -> None:
        """Hold again a run saved by :meth:`save_run`: resuming its ``RunState`` here
        continues its firewall and its log chain."""
        refuse_inside_run("restore_run()")
        self.runs.adopt(restored_run(self, document))

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
        self._schemas.setdefault(tool.name, tool.params_json_schema)

    def admit(self, run: AgentRun, name: str) -> None:
        """A guarded tool that joined after ``run``'s firewall was built (a handoff's
        agent made at run time, a tool added by instructions) is declared to it, as the
        tools known at its start were: checked on its schema, never refused as unknown."""
        if not self.schema_checks or name not in self._declared:
            return
        if name in run.declared or name in run.learned:
            return
        run.learned.append(name)
        run.firewall.declare_tools([self._declared[name]])

    # the model turn ----------------------------------------------------------------
    async def propose_turn(self, context: Any, agent: Any, response: Any) -> None:
        """``on_llm_end``: the turn's calls that run now, judged in the model's order."""
        calls, ids = turn_calls(agent, response)
        run = self.runs.of(context, ids)
        self.runs.note_calls(run, ids)
        for name, _, _ in calls:
            self.admit(run, name)
        run.propose_turn(calls, ids)

    def awaiting_approval(self, context: Any, call_id: str) -> None:
        """A call of the turn waits for a human's approval: it does not run now."""
        reason = "it waits for a human's approval; it is judged again when it runs"
        self.runs.of(context).unbatch(call_id, reason)

    # one call ----------------------------------------------------------------------
    def _decide(self, run: AgentRun, name: str, prepared: Prepared, call_id: str) -> Decision:
        self.runs.note_calls(run, (call_id,))
        self.admit(run, name)
        return run.decide(name, prepared, call_id)

    async def _refused(self, run: AgentRun, decision: Decision) -> str:
        """The text a refused call answers with; a STOP (not nested in another call of
        the run) ends the run first, then raises the SDK's tripwire."""
        if decision.action is Action.STOP:
            if enclosing(self) is not run:
                await self.end(run)
            raise ToolInputGuardrailTripwireTriggered(
                guardrail=self.input_guardrail,
                output=ToolGuardrailFunctionOutput.raise_exception(output_info=decision),
            )
        return run.refusal or blocked_text(decision)

    async def _check_call(self, data: Any) -> ToolGuardrailFunctionOutput:
        """agentguard's tool input guardrail: the call's decision, before any other."""
        context = data.context
        tool = _tool_of(data.agent, context.tool_name)
        run = self.run_of(context)
        raw = context.tool_arguments
        prepared = run.turn_arguments(context.tool_call_id, raw)
        if prepared is None and tool is not None:
            prepared = prepare(tool, raw)
        if prepared is None or (prepared.problem is not None and not prepared.args):
            return ToolGuardrailFunctionOutput.allow()  # the invoker answers as the SDK would
        decision = self._decide(run, context.tool_name, prepared, context.tool_call_id)
        if decision.action is Action.STOP:
            if enclosing(self) is not run:
                await self.end(run)
            return ToolGuardrailFunctionOutput.raise_exception(output_info=decision)
        if not decision.executes:
            text = run.refusal or blocked_text(decision)
            return ToolGuardrailFunctionOutput.reject_content(text, output_info=decision)
        run.hold(decision, prepared)
        task = asyncio.current_task()
        if task is not None:  # the SDK is done with the call when its task is
            call_id = context.tool_call_id
            task.add_done_callback(lambda done: run.drop(call_id, _dropped(done)))
        return ToolGuardrailFunctionOutput.allow(output_info=decision)

    async def invoke(
        self,
        tool: FunctionTool,
        inner: Callable[[Any, str], Awaitable[Any]],
        context: Any,
        raw_args: str,
    ) -> Any:
        """Run the function of an allowed call with the checked arguments, then complete it."""
        run = self.run_of(context)
        call_id = context.tool_call_id
        held = run.take(call_id)
        if held is not None and held.prepared.raw == raw_args:
            decision, prepared = held.decision, held.prepared
        else:  # the guardrail did not judge these arguments (or did not run): judge here
            if held is not None:
                run.withdraw(held.decision, "the call that ran had other arguments")
            prepared = prepare(tool, raw_args)
            if prepared.problem is not None and not prepared.args:
                return await failure_reply(tool, context, prepared.problem)
            decision = self._decide(run, context.tool_name, prepared, call_id)
            if not decision.executes:
                return await self._refused(run, decision)
        if prepared.text is None:  # the SDK would refuse these arguments: it never runs
            problem = prepared.problem or "its arguments cannot be used"
            run.withdraw(decision, problem)
            return await failure_reply(tool, context, problem)
        started = await run.start(decision)
        if not started.executes:
            return await self._refused(run, started)
        try:
            text = handed_text(prepared, started.arguments())
            handed = handover(tool, text, started.arguments())
        except Exception as exc:  # noqa: BLE001 - started, never ran: withdrawn, not left
            text, handed = "", f"its arguments could not be handed over ({type(exc).__name__})"
        if isinstance(handed, str):  # its validation would hand it another value
            run.withdraw_started(started, handed)
            return await failure_reply(tool, context, handed)
        if hasattr(context, _PREPARED):  # (the SDK's, from its approval check: not ours)
            setattr(context, _PREPARED, handed)
        if isinstance(getattr(context, "tool_arguments", None), str):
            context.tool_arguments = text  # a function reading its context reads them too
        receipt = None
        try:
            with (
                enclosing_call(self, run),
                received_as_checked(sdk_invoker(tool), text, validated_text) as receipt,
            ):
                result = await inner(context, text)
        except BaseException as exc:
            if receipt is not None and receipt.refused is not None:  # it never ran
                run.withdraw_started(started, receipt.refused)
            else:
                run.ran(started, None, error=exc)
            raise
        finally:  # the function held ctx.agent: whatever it took off is put back
            self.keep_guarded(getattr(context, "agent", None))
        if receipt.refused is not None:  # an agent tool's validation refused: the SDK's
            run.withdraw_started(started, receipt.refused)  # failure text is the answer
            return result
        if nested_pause(tool, context):
            run.withdraw_started(
                started, "its agent paused for an approval; it runs again on resume"
            )
            return result
        failed = bool(getattr(context, _HANDLED_FAILURE, False))
        value = jsonable(result)
        run.ran(started, value, error=text_of(value) if failed else None)
        return result

    def keep_guarded(self, agent: Any) -> None:
        """Guard again the agents a tool's function could reach (its ``ToolContext``'s
        agent, and the agents ``guard()`` was given): a function that replaced their hooks,
        dropped the output guardrail or put unguarded tools back leaves no trace of it
        for the next turn (the hooks that re-install each turn may be what it removed)."""
        for root in (*self.roots, agent):
            if isinstance(root, Agent):
                install(root, self)

    # the final answer --------------------------------------------------------------
    async def _check_answer(self, context: Any, agent: Any, output: Any) -> GuardrailFunctionOutput:
        del agent
        run = self.run_of(context)
        if enclosing(self) is run:  # a nested agent's answer is its tool call's result
            return GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)
        answer = jsonable(output)
        prepared = Prepared("", {"answer": answer}, None)
        decision = run.decide(FINAL_TOOL, prepared, f"final:{id(output)}")
        if decision.executes:
            decision = await run.start(decision)
            if decision.executes:
                run.ran(decision, answer, error=None)
        await self.end(run)
        return GuardrailFunctionOutput(
            output_info=decision, tripwire_triggered=not decision.executes
        )


def _dropped(task: asyncio.Task[Any]) -> str:
    """Why the SDK never invoked a call agentguard allowed, from how its task ended."""
    if task.cancelled():
        return "the SDK cancelled the call before its function ran"
    error = task.exception()
    if error is not None:
        return f"the SDK stopped before its function ran ({type(error).__name__}: {error})"
    return (
        "the SDK did not run it: another tool input guardrail rejected it, or it waits "
        "for a human's approval"
    )


def _tool_of(agent: Any, name: str) -> FunctionTool | None:
    for tool in getattr(agent, "tools", ()):
        if isinstance(tool, FunctionTool) and tool.name == name:
            return tool
    return None


# ---------------------------------------------------------------- installing
def guard_openai_agent(
    agent: Any,
    spec: SpecLike,
    *,
    offer: Offer | None = None,
    keep_sessions: int = KEEP_SESSIONS,
    **firewall_kwargs: Unpack[FirewallOptions],
) -> Any:
    """Guard ``agent`` (and every agent it reaches) in place; returns it. ``keep_sessions``:
    how many SDK sessions' runs the guard keeps, to continue their next turns."""
    if not isinstance(agent, Agent):
        raise UnsupportedAgentError(f"expected an agents.Agent, got {type(agent).__qualname__}")
    if isinstance(getattr(agent, ATTRIBUTE, None), OpenAIAgentsGuard):
        raise AlreadyGuardedError(f"agent {agent.name!r} is already guarded")
    schemas = agent_tool_schemas(agent)
    if schemas is not None:
        firewall_kwargs.setdefault("agent_tools", schemas)
    spec = check_agent_tools(spec, firewall_kwargs)  # reported here, at the guard() line
    guard = OpenAIAgentsGuard(spec, offer=offer, keep_sessions=keep_sessions, **firewall_kwargs)
    guard.roots.append(agent)
    install(agent, guard)
    watch_sessions()  # a run's events learn its session through the runner's entry points
    return agent


__all__ = ["ATTRIBUTE", "OpenAIAgentsGuard", "guard_openai_agent"]
