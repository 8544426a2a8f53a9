"""The guarded tools executor of an AgentDojo pipeline: AgentDojo's ``ToolsExecutor``
with every model tool call checked by the run's firewall before it runs.

One model turn (the last assistant message's ``tool_calls``) is one batch:

1. the messages the run has not observed yet (the user's prompt, the assistant's text)
   are observed as dialogue events, in order;
2. each call is prepared as AgentDojo's executor and runtime would run it: an empty or
   unknown tool name, or arguments the tool's schema rejects, never run and are answered
   with AgentDojo's own error text (so they are never proposed); otherwise the arguments
   are what the tool receives: list-like strings made lists (``ToolsExecutor`` does so),
   then validated and dumped by the tool's ``parameters`` model (coerced values, declared
   defaults filled in);
3. the batch is proposed in order (``propose_batch``); each allowed call is started, run
   with ``decision.arguments()`` (a copy of what was checked), and completed with the
   value its rendered text encodes (:func:`agentguard.trace.formats.agentdojo.result_value`
   of what the model reads) or with the runtime's error; a refused call is answered with
   the refusal text (:func:`agentguard.guard_shared.blocked_text`) as the tool message's
   ``error``, which every AgentDojo LLM shows the model;
4. each tool message's ``tool_call`` is the call that ran, with the checked arguments, so
   the run file AgentDojo writes holds what was checked.

A stop (a HARD_STOP, an escalated SOFT_BLOCK, a result that breaks a HARD_STOP
constraint) ends the run: the messages so far are logged and AgentDojo's
``AbortAgentError`` is raised, which its runner catches and scores.
"""

from __future__ import annotations

import contextlib
import contextvars
from ast import literal_eval
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import AgentGuardError, MissingExtraError
from agentguard.guard import GuardSession
from agentguard.guard_shared import blocked_text
from agentguard.trace.formats.agentdojo import EMPTY_NAME, INVALID_TOOL, message_text, result_value
from agentguard.trace.refusal import is_refusal

try:
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.agent_pipeline.errors import AbortAgentError
    from agentdojo.agent_pipeline.llms.google_llm import EMPTY_FUNCTION_NAME
    from agentdojo.agent_pipeline.tool_execution import is_string_list, tool_result_to_str
    from agentdojo.functions_runtime import EmptyEnv, FunctionCall, FunctionsRuntime
    from agentdojo.logging import Logger
    from agentdojo.types import ChatToolResultMessage, text_content_block_from_string
    from pydantic import ValidationError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("agentdojo", "agentdojo") from exc

Formatter = Callable[[Any], str]
"""How a tool's return value becomes the text the model reads (AgentDojo's
``tool_output_formatter``; ``tool_result_to_str``, YAML, by default)."""


@dataclass
class RunState:
    """One guarded task run: its session, and how many of its messages were observed."""

    session: GuardSession
    observed: int = 0

    def observe_through(self, messages: Sequence[Any]) -> None:
        """Observe the messages not observed yet: user and assistant messages are dialogue
        events, as the run-file reader makes them (tool and system messages are not)."""
        for message in messages[self.observed :]:
            self.observed += 1
            role = message.get("role")
            if role == "user":
                text = message_text(message.get("content"))
                if text is not None and not is_refusal(text):
                    self.session.observe("user", text, tool_calls=0)
            elif role == "assistant":
                calls = message.get("tool_calls") or []
                text = message_text(message.get("content")) or ""
                if calls or not is_refusal(text):
                    self.session.observe("assistant", text, tool_calls=len(calls))


CURRENT_RUN: Final[contextvars.ContextVar[RunState | None]] = contextvars.ContextVar(
    "agentguard_agentdojo_run", default=None
)
"""The run the guarded pipeline is executing in this context (set by
:class:`~agentguard.integrations.agentdojo.AgentGuardPipeline`); tools cannot reach it."""


@dataclass(frozen=True)
class _Prepared:
    """One requested call, ready to propose (``args``) or already answered (``error``)."""

    call: FunctionCall
    args: dict[str, Any] | None
    error: str | None = None


class GuardedToolsExecutor(BasePipelineElement):  # type: ignore[misc]  # agentdojo is untyped
    """``ToolsExecutor`` with every call checked first (see the module docstring)."""

    def __init__(self, tool_output_formatter: Formatter = tool_result_to_str) -> None:
        self.output_formatter = tool_output_formatter

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Any = EmptyEnv(),  # noqa: B008 - AgentDojo's own signature
        messages: Sequence[Any] = [],
        extra_args: dict[str, Any] = {},  # noqa: B006 - AgentDojo's own signature
    ) -> tuple[str, FunctionsRuntime, Any, Sequence[Any], dict[str, Any]]:
        if not messages or messages[-1]["role"] != "assistant":
            return query, runtime, env, messages, extra_args
        calls = messages[-1]["tool_calls"]
        if not calls:
            return query, runtime, env, messages, extra_args
        run = CURRENT_RUN.get()
        if run is None:
            raise AgentGuardError(
                "GuardedToolsExecutor runs only inside the pipeline guard_pipeline() returns "
                "(agentguard.integrations.agentdojo): it has no run to check calls against"
            )
        with contextlib.suppress(RunStopped):  # a message broke a HARD_STOP constraint:
            run.observe_through(messages)  # the firewall refuses every call from now
        answers = self._run_turn(run.session, [_prepare(c, runtime) for c in calls], runtime, env)
        out = [*messages, *answers]
        if run.session.stopped:
            run.observed = len(out)
            Logger().get().log(out)  # AgentDojo's runner does not log an aborted run's end
            stop = run.session.stop
            reason = blocked_text(stop) if stop is not None else "agentguard stopped the run"
            raise AbortAgentError(reason, list(out), env)
        return query, runtime, env, out, extra_args

    def _run_turn(
        self, session: GuardSession, prepared: list[_Prepared], runtime: FunctionsRuntime, env: Any
    ) -> list[Any]:
        """The tool messages of one model turn, each call checked before it runs."""
        proposed = [p for p in prepared if p.args is not None]
        decisions = iter(
            session.propose_batch([(p.call.function, p.args or {}, p.call.id) for p in proposed])
        )
        answers = []
        for item in prepared:
            if item.args is None:
                answers.append(_message(item.call, "", item.error))
                continue
            decision = next(decisions)
            if decision.executes and not session.stopped:
                decision = session.start(decision)
            if not decision.executes or session.stopped:
                if decision.executes:  # the run stopped under it: it never starts
                    session.withdraw(decision, "the run stopped before it started")
                answers.append(_message(item.call, "", blocked_text(_refusal(decision))))
                continue
            answers.append(self._execute(session, decision, item.call, runtime, env))
        return answers

    def _execute(
        self,
        session: GuardSession,
        decision: Decision,
        call: FunctionCall,
        runtime: FunctionsRuntime,
        env: Any,
    ) -> Any:
        """Run one allowed call with the checked arguments; its tool message."""
        args = decision.arguments()
        ran = FunctionCall(
            function=call.function, args=args, id=call.id, placeholder_args=call.placeholder_args
        )
        try:
            result, error = runtime.run_function(env, call.function, decision.arguments())
            text = self.output_formatter(result)
        except BaseException as exc:  # it began: it ran, with this error (Ctrl-C included)
            session.complete(decision, error=exc)
            raise
        try:
            if error:
                session.complete(decision, error, error=error)
            else:
                session.complete(decision, result_value(text))
        except RunStopped:  # its result stopped the run: it ran, the turn ends here
            pass
        return _message(ran, text, error or None)


def _refusal(decision: Decision) -> Decision:
    """A decision to show as a refusal (a call the stopped run never started is told so)."""
    if decision.executes:
        message = f"agentguard did not run {decision.tool}: the run stopped before it started."
        return Decision(Action.STOP, decision.tool, dict(decision.args), message=message)
    return decision


def _message(call: FunctionCall, text: str, error: str | None) -> Any:
    return ChatToolResultMessage(
        role="tool",
        content=[text_content_block_from_string(text)],
        tool_call_id=call.id,
        tool_call=call,
        error=error,
    )


def _prepare(call: FunctionCall, runtime: FunctionsRuntime) -> _Prepared:
    """The call as the tool would receive it, or AgentDojo's answer when it never would
    run (see the module docstring)."""
    name = call.function
    if name == EMPTY_FUNCTION_NAME:
        return _Prepared(call, None, EMPTY_NAME)
    function = runtime.functions.get(name)
    if function is None:
        return _Prepared(call, None, INVALID_TOOL.format(name=name))
    args = {
        key: literal_eval(value) if isinstance(value, str) and is_string_list(value) else value
        for key, value in dict(call.args).items()
    }
    if any(isinstance(value, FunctionCall) for value in args.values()):
        return _Prepared(call, args)  # a nested call: the firewall refuses what it cannot copy
    try:
        checked: Mapping[str, Any] = function.parameters.model_validate(args).model_dump()
    except ValidationError as exc:
        return _Prepared(call, None, f"ValidationError: {exc}")
    return _Prepared(call, dict(checked))


__all__ = ["CURRENT_RUN", "Formatter", "GuardedToolsExecutor", "RunState"]
