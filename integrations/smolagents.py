"""Guard a smolagents ``ToolCallingAgent`` or ``CodeAgent`` (smolagents >= 1.26).

``guard_smolagents(agent, spec)`` returns the same agent with:

* every tool in ``agent.tools`` (except ``final_answer``) replaced by a guarded copy;
  both agent types read ``agent.tools`` when ``run()`` starts, so replacing the entries
  after construction is enough. The copy holds the original only in a closure, which
  model-written code cannot reach (the local executor forbids dunder access), so
  aliasing the tool, calling ``.forward``, ``getattr``, ``map`` or threads all land in
  the same gate;
* a blocked call never runs: a ``ToolCallingAgent`` gets the reason as the tool's
  observation (a string, so sibling results of a parallel batch survive), a
  ``CodeAgent`` gets :class:`ToolCallBlocked` raised at that line;
* a HARD_STOP raises :class:`agentguard.errors.RunStopped`, a ``BaseException`` that no
  ``except Exception`` (the framework's or the model's) swallows: ``agent.run`` raises it;
* the final answer is gated through ``agent.final_answer_checks`` (never by wrapping the
  ``final_answer`` tool, whose return value *is* the answer): a refused answer becomes
  an error the model sees, and the run goes on;
* parallel tool calls are checked as one batch (``propose_batch``) before any runs;
* managed agents share the manager's guard: their tool calls belong to the same run,
  trace and report (delegating to a managed agent is not itself a call);
* ``run(task, reset=False)`` continues the conversation (smolagents keeps its memory),
  and the guard continues the previous run's trace: what turn 1 did counts in turn 2.

After a run, ``agent.agentguard`` is the :class:`~agentguard.guard.GuardSession`:
``.trace``, ``.attempts``, ``.report`` (``.compliance``), ``.log_path``, ``.stop``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any

from agentguard.enforcement.decision import Action, Decision
from agentguard.errors import AgentGuardError, MissingExtraError, RunStopped
from agentguard.guard import (
    FINAL_TOOL,
    AlreadyGuardedError,
    GuardSession,
    UnsupportedAgentError,
    blocked_text,
)

ATTRIBUTE = "agentguard"
"""The attribute of a guarded agent holding its :class:`GuardSession`."""


class ToolCallBlocked(AgentGuardError):
    """Raised inside a CodeAgent's code when the firewall blocks a call; the model sees it."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(blocked_text(decision))


class ToolArgumentsError(AgentGuardError, TypeError):
    """Positional arguments that do not fit the tool's declared inputs."""


class FinalAnswerRefused(AgentGuardError):
    """The firewall refused the final answer; smolagents shows this to the model."""


def _smolagents() -> Any:
    try:
        import smolagents
    except ImportError as exc:
        raise MissingExtraError("smolagents", "smolagents") from exc
    return smolagents


def guard_smolagents(
    agent: Any,
    spec: Any,
    **firewall_kwargs: Any,
) -> Any:
    """Guard a smolagents agent in place and return it (see the module docstring)."""
    smolagents = _smolagents()
    if not isinstance(agent, smolagents.MultiStepAgent):
        raise UnsupportedAgentError(f"expected a smolagents agent, got {type(agent).__qualname__}")
    if getattr(agent, "executor_type", "local") != "local":
        raise UnsupportedAgentError(
            f"a CodeAgent with executor_type={agent.executor_type!r} runs its tools in another "
            "process, out of the guard's reach; agentguard supports executor_type='local'"
        )
    if isinstance(getattr(agent, ATTRIBUTE, None), GuardSession):
        raise AlreadyGuardedError(f"agent {agent.name or type(agent).__name__} is already guarded")
    session = GuardSession(spec, **firewall_kwargs)
    _install(agent, session, smolagents)
    return agent


def _install(agent: Any, session: GuardSession, smolagents: Any) -> None:
    _guard_tools(agent, session, smolagents)
    setattr(agent, ATTRIBUTE, session)
    agent.final_answer_checks = [*agent.final_answer_checks, _final_answer_check(session)]
    if isinstance(agent, smolagents.ToolCallingAgent):
        agent.process_tool_calls = _batch_checked(agent.process_tool_calls, agent, session)
    agent._handle_max_steps_reached = _last_answer_checked(agent._handle_max_steps_reached, session)
    agent.run = _run_with_session(agent, agent.run, session, smolagents)


def _guard_tools(agent: Any, session: GuardSession, smolagents: Any) -> None:
    """Replace every unguarded tool (managed agents' too); run again at each ``run()``
    so tools added to ``agent.tools`` after ``guard()`` are guarded as well."""
    raises = isinstance(agent, smolagents.CodeAgent)
    for name, tool in list(agent.tools.items()):
        if name != FINAL_TOOL and not getattr(tool, "agentguard_guarded", False):
            agent.tools[name] = guarded_tool(tool, session, raise_on_block=raises)
    for managed in agent.managed_agents.values():
        _guard_tools(managed, session, smolagents)
        setattr(managed, ATTRIBUTE, session)


# the tool gate -----------------------------------------------------------------------
def guarded_tool(tool: Any, session: GuardSession, *, raise_on_block: bool) -> Any:
    """A copy of ``tool`` whose every call goes through ``session`` first."""
    smolagents = _smolagents()
    gate = _gate(tool, session, raise_on_block=raise_on_block)

    class GuardedTool(smolagents.Tool):  # type: ignore[misc, name-defined]
        skip_forward_signature_validation = True
        agentguard_guarded = True
        name = tool.name
        description = tool.description
        inputs = tool.inputs
        output_type = tool.output_type
        output_schema = getattr(tool, "output_schema", None)

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return gate(args, kwargs)

    GuardedTool.__name__ = GuardedTool.__qualname__ = f"Guarded_{tool.name}"
    copy = GuardedTool()
    copy.is_initialized = True
    return copy


def _gate(
    tool: Any, session: GuardSession, *, raise_on_block: bool
) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
    name: str = tool.name
    order = list(tool.inputs)

    def gate(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        arguments = bind_arguments(name, order, args, kwargs)
        decision = session.propose(name, arguments)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            if raise_on_block:
                raise ToolCallBlocked(decision)
            return blocked_text(decision)
        try:
            result = tool(**arguments)
        except Exception as exc:
            session.record(name, arguments, f"Error: {type(exc).__name__}: {exc}")
            raise
        session.record(name, arguments, result)
        return result

    return gate


def bind_arguments(
    name: str, order: list[str], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """Name positional arguments after the tool's declared ``inputs`` (CodeAgent passes them)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], dict) and set(args[0]) <= set(order):
        return dict(args[0])
    if len(args) > len(order):
        raise ToolArgumentsError(
            f"{name} takes {len(order)} argument(s) ({', '.join(order)}), got {len(args)}"
        )
    bound = dict(zip(order, args, strict=False))  # fewer args than inputs is fine
    twice = sorted(set(bound) & set(kwargs))
    if twice:
        raise ToolArgumentsError(f"{name} got multiple values for {', '.join(twice)}")
    bound.update(kwargs)
    return bound


# final answer, batches, run lifecycle --------------------------------------------------
def _final_answer_check(session: GuardSession) -> Callable[..., bool]:
    def agentguard_final_answer(
        final_answer: Any,
        memory: Any = None,  # noqa: ARG001 - smolagents passes it
        agent: Any = None,  # noqa: ARG001
    ) -> bool:
        arguments = {"answer": _plain(final_answer)}
        decision = session.propose(FINAL_TOOL, arguments)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            raise FinalAnswerRefused(blocked_text(decision))
        session.record(FINAL_TOOL, arguments, arguments["answer"])
        return True

    return agentguard_final_answer


def _last_answer_checked(
    handle: Callable[[str], Any], session: GuardSession
) -> Callable[[str], Any]:
    """At max steps smolagents asks the model for an answer and skips final_answer_checks;
    it is checked here instead, and with no step left to fix it, a refusal stops the run."""

    def handle_max_steps(task: str) -> Any:
        answer = handle(task)
        arguments = {"answer": _plain(answer)}
        decision = session.propose(FINAL_TOOL, arguments)
        if not decision.executes:
            note = f"max steps reached and the final answer is refused: {decision.message}"
            raise RunStopped(replace(decision, action=Action.STOP, message=note))
        session.record(FINAL_TOOL, arguments, arguments["answer"])
        return answer

    return handle_max_steps


def _plain(value: Any) -> Any:
    """smolagents wraps answers in AgentText (a str subclass); specs see the plain value."""
    return str(value) if isinstance(value, str) else value


def _batch_checked(
    process_tool_calls: Callable[[Any, Any], Iterator[Any]], agent: Any, session: GuardSession
) -> Callable[[Any, Any], Generator[Any, None, None]]:
    """Check a parallel batch (two or more calls) as one before any of it runs."""

    def process(chat_message: Any, memory_step: Any) -> Generator[Any, None, None]:
        calls = [
            (c.function.name, _arguments(agent, c.function.arguments))
            for c in chat_message.tool_calls or ()
            if c.function.name != FINAL_TOOL and c.function.name in agent.tools
        ]
        if len(calls) > 1:
            decisions = session.propose_batch(calls)
            stop = next((d for d in decisions if d.action is Action.STOP), None)
            if stop is not None:
                raise RunStopped(stop)
        try:
            yield from process_tool_calls(chat_message, memory_step)
        finally:
            session.clear_predecided()

    return process


def _arguments(agent: Any, arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    if not isinstance(arguments, dict):
        return {}
    substituted = agent._substitute_state_variables(arguments)
    return dict(substituted) if isinstance(substituted, dict) else {}


def _run_with_session(
    agent: Any, run: Callable[..., Any], session: GuardSession, smolagents: Any
) -> Callable[..., Any]:
    """Each ``run`` gets a fresh firewall and is finished after; ``reset=False`` (smolagents
    keeps its memory, ``MultiStepAgent.run``) continues the previous run's trace instead."""
    signature = inspect.signature(run)

    def guarded_run(task: str, *args: Any, **kwargs: Any) -> Any:
        given = signature.bind(task, *args, **kwargs).arguments
        _guard_tools(agent, session, smolagents)
        session.start_run(resume=not given.get("reset", True))
        if given.get("stream", False):
            return _finish_after(run(task, *args, **kwargs), session)
        try:
            return run(task, *args, **kwargs)
        finally:
            session.finish_run()

    return guarded_run


def _finish_after(steps: Iterator[Any], session: GuardSession) -> Generator[Any, None, None]:
    try:
        yield from steps
    finally:
        session.finish_run()


__all__ = [
    "ATTRIBUTE",
    "FinalAnswerRefused",
    "ToolArgumentsError",
    "ToolCallBlocked",
    "bind_arguments",
    "guard_smolagents",
    "guarded_tool",
]
