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
* a HARD_STOP raises :class:`agentguard.enforcement.decision.RunStopped`, a ``BaseException`` that no
  ``except Exception`` (the framework's or the model's) swallows: ``agent.run`` raises it;
* the final answer is gated through ``agent.final_answer_checks`` (never by wrapping the
  ``final_answer`` tool, whose return value *is* the answer): a refused answer becomes
  an error the model sees, and the run goes on;
* every model turn of a ``ToolCallingAgent`` is checked as one batch (``propose_batch``)
  before any of it runs, after tool-call ids repeated within the turn are made unique
  (smolagents keys parallel calls by id, so only one of two calls sharing an id would
  run); each call then follows the firewall's execution protocol: ``start`` right before
  the tool body (waiting for, or re-checked against, the calls its approval relied on),
  ``complete`` with the result or the error it raised, or ``withdraw`` when smolagents
  never ran it (arguments rejected by the tool's validation, a sibling raised, a STOP);
* a ``CodeAgent`` whose authorised imports would let model code reach the original,
  unguarded tool objects (``"*"``, the modules defining the tools, or ``sys``, ``gc``,
  ``importlib``, ``inspect``, ``builtins``) is refused at ``guard()`` time with
  :class:`ExposedToolsError` naming those imports;
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
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any, Final

from typing_extensions import Unpack

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import AgentGuardError, MissingExtraError
from agentguard.guard import (
    FINAL_TOOL,
    AlreadyGuardedError,
    GuardOptions,
    GuardSession,
    UnsupportedAgentError,
    blocked_text,
)
from agentguard.scoring.inputs import SpecLike

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


class ExposedToolsError(AgentGuardError, ValueError):
    """A CodeAgent's authorised imports let model code reach the unguarded tool objects."""


REACHING_MODULES: Final = ("sys", "gc", "importlib", "inspect", "builtins")
"""Modules whose import hands model code any loaded module or object, tools included."""


def _smolagents() -> Any:
    try:
        import smolagents
    except ImportError as exc:
        raise MissingExtraError("smolagents", "smolagents") from exc
    return smolagents


def guard_smolagents(
    agent: Any,
    spec: SpecLike,
    **firewall_kwargs: Unpack[GuardOptions],
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
    if isinstance(agent, smolagents.CodeAgent):
        refuse_exposing_imports(agent)
    firewall_kwargs.setdefault("agent_tools", agent_tool_schemas(agent))
    session = GuardSession(spec, **firewall_kwargs)
    _install(agent, session, smolagents)
    return agent


_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


def agent_tool_schemas(agent: Any) -> dict[str, dict[str, Any]]:
    """The agent's tools as JSON Schemas (from smolagents' ``Tool.inputs``), for the
    firewall's comparison with the spec's tools (``agent_tools``, docs/firewall.md).

    smolagents' own type names beyond JSON's (``any``, ``image``, ``audio``) say nothing
    a declaration could contradict, so they are left out of the property schema.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, tool in dict(getattr(agent, "tools", {}) or {}).items():
        inputs = getattr(tool, "inputs", None)
        inputs = inputs if isinstance(inputs, dict) else {}
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param, desc in inputs.items():
            desc = desc if isinstance(desc, dict) else {}
            kind = desc.get("type")
            kinds = kind if isinstance(kind, list) else [kind]
            known = [k for k in kinds if isinstance(k, str) and k in _JSON_TYPES]
            properties[param] = {"type": known} if known and len(known) == len(kinds) else {}
            if not desc.get("nullable"):
                required.append(param)
        out[str(name)] = {"type": "object", "properties": properties, "required": required}
    return out


def refuse_exposing_imports(agent: Any) -> None:
    """Raise :class:`ExposedToolsError` if model code could import its way to a tool.

    The guarded copies hold the originals only in closures, but the originals also live
    in the modules that define them: an authorised import of such a module (or of one
    that reaches every module) would let ``tools_mod.delete_account()`` run unguarded.
    """
    from smolagents.local_python_executor import check_import_authorized

    authorised = list(getattr(agent, "additional_authorized_imports", ()) or ())
    if not authorised:
        return
    originals = {id(t): t for t in _all_tools(agent)}
    homes = sorted({m for t in originals.values() for m in _homes(t)})
    exposing: dict[str, str] = {}
    for module in [*REACHING_MODULES, *homes]:
        if check_import_authorized(module, authorised):
            what = "defines a tool" if module in homes else "reaches every loaded module"
            exposing[module] = what
    for name in authorised:  # an authorised module holding a tool, or a tool's module
        loaded = sys.modules.get(name)
        if loaded is None or name in exposing:
            continue
        for value in list(vars(loaded).values()):
            if id(value) in originals or getattr(value, "__name__", None) in homes:
                exposing[name] = "holds a tool or a tool's module"
                break
    if exposing:
        listed = "; ".join(f"{m!r} ({why})" for m, why in sorted(exposing.items()))
        raise ExposedToolsError(
            f"this CodeAgent's additional_authorized_imports {authorised!r} let model code "
            f"reach the original, unguarded tool objects through: {listed}. Remove these "
            "imports, or move the tools to a module the agent may not import."
        )


def _all_tools(agent: Any) -> list[Any]:
    tools = [t for n, t in agent.tools.items() if n != FINAL_TOOL]
    for managed in agent.managed_agents.values():
        tools.extend(_all_tools(managed))
    return tools


def _homes(tool: Any) -> set[str]:
    """The modules defining ``tool``: its class's and its forward function's."""
    out = {type(tool).__module__}
    forward = getattr(type(tool), "forward", None)
    module = getattr(forward, "__module__", None)
    if isinstance(module, str):
        out.add(module)
    wrapped = getattr(forward, "__wrapped__", None)
    if wrapped is not None and isinstance(getattr(wrapped, "__module__", None), str):
        out.add(wrapped.__module__)
    return {m for m in out if not m.startswith("smolagents")}


def _install(agent: Any, session: GuardSession, smolagents: Any) -> None:
    _guard_tools(agent, session, smolagents)
    setattr(agent, ATTRIBUTE, session)
    agent.final_answer_checks = [*agent.final_answer_checks, _final_answer_check(session)]
    if isinstance(agent, smolagents.ToolCallingAgent):
        agent.process_tool_calls = _batch_checked(agent.process_tool_calls, agent, session)
        agent.execute_tool_call = _withdraw_unrun(agent.execute_tool_call, agent, session)
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

    def refused(decision: Decision) -> Any:
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if raise_on_block:
            raise ToolCallBlocked(decision)
        return blocked_text(decision)

    def gate(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        arguments = bind_arguments(name, order, args, kwargs)
        _REACHED.reached = True  # the framework got as far as the tool: not withdrawn
        decision = session.propose(name, arguments)
        if not decision.executes:
            return refused(decision)
        started = session.start(decision)
        if not started.executes:
            return refused(started)
        try:
            result = tool(**arguments)
        except Exception as exc:
            session.complete(started, error=exc)
            raise
        session.complete(started, result)
        return result

    return gate


class _Reached(threading.local):
    """Per worker thread: did the current tool execution reach a guarded tool's gate?"""

    reached = False


_REACHED = _Reached()


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
        if decision.executes:
            decision = session.start(decision)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            raise FinalAnswerRefused(blocked_text(decision))
        session.complete(decision, arguments["answer"])
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
        if decision.executes:
            decision = session.start(decision)
        if not decision.executes:
            note = f"max steps reached and the final answer is refused: {decision.message}"
            raise RunStopped(replace(decision, action=Action.STOP, message=note))
        session.complete(decision, arguments["answer"])
        return answer

    return handle_max_steps


def _plain(value: Any) -> Any:
    """smolagents wraps answers in AgentText (a str subclass); specs see the plain value."""
    return str(value) if isinstance(value, str) else value


def _batch_checked(
    process_tool_calls: Callable[[Any, Any], Iterator[Any]], agent: Any, session: GuardSession
) -> Callable[[Any, Any], Generator[Any, None, None]]:
    """Check a model turn's calls as one batch before any of it runs."""

    def process(chat_message: Any, memory_step: Any) -> Generator[Any, None, None]:
        unique_ids(chat_message.tool_calls or ())
        calls = [
            (c.function.name, _arguments(agent, c.function.arguments), str(c.id))
            for c in chat_message.tool_calls or ()
            if c.function.name != FINAL_TOOL and c.function.name in agent.tools
        ]
        if calls:
            decisions = session.propose_batch(calls)
            stop = next((d for d in decisions if d.action is Action.STOP), None)
            if stop is not None:
                session.withdraw_unclaimed(f"a call of the same turn stopped the run ({stop.tool})")
                raise RunStopped(stop)
        try:
            yield from process_tool_calls(chat_message, memory_step)
        finally:
            session.withdraw_unclaimed("smolagents never ran this call")

    return process


def unique_ids(tool_calls: Any) -> None:
    """Make repeated tool-call ids of one turn unique, in place (``id``, ``id#2``, ...):
    smolagents keys a turn's calls by id, so of two calls sharing one only the last would
    run, while both were approved."""
    seen: dict[str, int] = {}
    for c in tool_calls:
        count = seen.get(c.id, 0) + 1
        seen[c.id] = count
        if count > 1:
            fresh = f"{c.id}#{count}"
            while fresh in seen:
                fresh += "'"
            seen[fresh] = 1
            c.id = fresh


def _withdraw_unrun(
    execute: Callable[[str, Any], Any], agent: Any, session: GuardSession
) -> Callable[[str, Any], Any]:
    """smolagents validates a call's arguments before running the tool; a call that never
    reached its tool (rejected arguments) is withdrawn, so its approval does not linger."""

    def execute_tool_call(tool_name: str, arguments: Any) -> Any:
        _REACHED.reached = False
        try:
            return execute(tool_name, arguments)
        except Exception as exc:
            if not _REACHED.reached and tool_name in agent.tools and tool_name != FINAL_TOOL:
                session.withdraw_predecided(
                    tool_name,
                    _arguments(agent, arguments),
                    f"smolagents did not run it: {type(exc).__name__}: {exc}",
                )
            raise
        finally:
            _REACHED.reached = False

    return execute_tool_call


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
        try:  # the task is the user's message to the agent
            session.observe("user", str(task))
        except RunStopped:
            session.finish_run()
            raise
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
    "REACHING_MODULES",
    "ExposedToolsError",
    "FinalAnswerRefused",
    "ToolArgumentsError",
    "ToolCallBlocked",
    "bind_arguments",
    "guard_smolagents",
    "guarded_tool",
    "refuse_exposing_imports",
    "unique_ids",
]
