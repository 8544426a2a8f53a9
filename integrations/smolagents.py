"""Guard a smolagents ``ToolCallingAgent`` or ``CodeAgent`` (smolagents >= 1.26).

``guard_smolagents(agent, spec)`` returns the same agent with:

* every tool (except ``final_answer``) replaced by a guarded copy wherever the agent
  looks tools up, at the moment it looks (``_smolagents_mediation.py``): ``agent.tools``
  when a run starts, a ToolCallingAgent's tool right before it runs, a CodeAgent's
  executor table and variables before each code action (tools appended mid-run by a
  step callback or a tool, sent to the executor, passed in ``additional_args``, or
  handed back by a tool are guarded too). The copy holds the original only in a
  closure, so aliasing the tool, ``.forward``, ``getattr``, ``map`` or threads all land
  in the same gate;
* what is checked is what runs (``_smolagents_tools.py``): positional arguments are
  named as ``forward`` takes them, the defaults its signature declares are filled in
  (``force: bool = True`` omitted is judged as ``True``), and the tool is called with
  the firewall's frozen snapshot of them (``Decision.arguments()``), never the objects
  model code passed; a call ``forward`` cannot take is refused before any check;
* a blocked call never runs: a ``ToolCallingAgent`` gets the reason as the tool's
  observation (a string, so sibling results of a parallel batch survive), a
  ``CodeAgent`` gets :class:`ToolCallBlocked` raised at that line;
* a HARD_STOP raises :class:`agentguard.enforcement.decision.RunStopped`, a
  ``BaseException`` that no ``except Exception`` (the framework's or the model's)
  swallows: ``agent.run`` raises it;
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
* the guard out of the agent's reach: managed agents are guarded like the manager (one
  run, trace and report) and never carry the session; model code holds them only as a
  closure-held callable. A CodeAgent's code is checked before it runs
  (``_smolagents_code.py``): frames (a traceback's, a generator's), computed attribute
  lookups and non-literal ``.format`` are refused;
* a ``CodeAgent`` (a managed one too) whose authorised imports would let model code
  reach the original tool objects (``"*"``, the modules defining or holding the tools,
  or modules that reach every object: :data:`REACHING_MODULES`) is refused at
  ``guard()`` time, or when its code first imports such a module, with
  :class:`ExposedToolsError` naming those imports;
* each ``run()`` is one run; ``run(task, reset=False)`` continues it (smolagents keeps
  its memory): the same run id, its firewall state restored, its decision log's chain
  continued. A call after a run ended (a lazy ``map`` consumed later) is refused by that
  run's firewall and logged there.

After a run, ``agent.agentguard`` is the :class:`~agentguard.guard.GuardSession`:
``.trace``, ``.attempts``, ``.report`` (``.compliance``), ``.log_path``, ``.stop``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

from typing_extensions import Unpack

from agentguard.enforcement.decision import RunStopped
from agentguard.guard import (
    AlreadyGuardedError,
    GuardOptions,
    GuardSession,
    UnsupportedAgentError,
)
from agentguard.guard_shared import check_agent_tools
from agentguard.scoring.inputs import SpecLike

from ._smolagents_errors import (
    ExposedToolsError,
    FinalAnswerRefused,
    StreamSupersededError,
    ToolArgumentsError,
    ToolCallBlocked,
)
from ._smolagents_exposure import REACHING_MODULES, refuse_exposing_imports
from ._smolagents_mediation import ADOPTED, ATTRIBUTE, Mediation, guarded_on_its_own, shared
from ._smolagents_offer import OfferingModel
from ._smolagents_tools import bind_arguments, guarded_tool, smolagents_module
from ._smolagents_turns import (
    batch_checked,
    final_answer_check,
    last_answer_checked,
    unique_ids,
    withdraw_unrun,
)


def guard_smolagents(
    agent: Any,
    spec: SpecLike,
    **firewall_kwargs: Unpack[GuardOptions],
) -> Any:
    """Guard a smolagents agent in place and return it (see the module docstring)."""
    smolagents = smolagents_module()
    if not isinstance(agent, smolagents.MultiStepAgent):
        raise UnsupportedAgentError(f"expected a smolagents agent, got {type(agent).__qualname__}")
    if getattr(agent, "executor_type", "local") != "local":
        raise UnsupportedAgentError(
            f"a CodeAgent with executor_type={agent.executor_type!r} runs its tools in another "
            "process, out of the guard's reach; agentguard supports executor_type='local'"
        )
    named = agent.name or type(agent).__name__
    if guarded_on_its_own(agent):
        raise AlreadyGuardedError(f"agent {named} is already guarded")
    for each in shared(agent):
        if each in ADOPTED:
            who = each.name or type(each).__name__
            raise AlreadyGuardedError(
                f"agent {who} is managed by a guarded agent and shares its guard; to give "
                "it a spec of its own, guard it before handing it to its manager"
            )
    refuse_exposing_imports(agent)
    firewall_kwargs.setdefault("agent_tools", agent_tool_schemas(agent))
    spec = check_agent_tools(spec, firewall_kwargs)  # reported here, at the guard() line
    session = GuardSession(spec, **firewall_kwargs)
    _install(agent, session, smolagents)
    return agent


_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


def agent_tool_schemas(agent: Any) -> dict[str, dict[str, Any]]:
    """The tools of the agent and of the agents it manages (those sharing its guard) as
    JSON Schemas (from smolagents' ``Tool.inputs``), for the firewall's comparison with
    the spec's tools (``agent_tools``, docs/firewall.md).

    smolagents' own type names beyond JSON's (``any``, ``image``, ``audio``) say nothing
    a declaration could contradict, so they are left out of the property schema.
    """
    out: dict[str, dict[str, Any]] = {}
    for managed in dict(getattr(agent, "managed_agents", {}) or {}).values():
        if not guarded_on_its_own(managed):
            out.update(agent_tool_schemas(managed))
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


def _install(agent: Any, session: GuardSession, smolagents: Any) -> None:
    mediation = Mediation(session, smolagents)
    mediation.adopt(agent)
    setattr(agent, ATTRIBUTE, session)
    agent.final_answer_checks = [*agent.final_answer_checks, final_answer_check(session)]
    if isinstance(agent, smolagents.ToolCallingAgent):
        fill = mediation.filler(agent)
        agent.process_tool_calls = batch_checked(agent.process_tool_calls, agent, session, fill)
        agent.execute_tool_call = withdraw_unrun(agent.execute_tool_call, agent, session, fill)
    agent._handle_max_steps_reached = last_answer_checked(agent._handle_max_steps_reached, session)
    agent.run = _run_with_session(agent, agent.run, session, mediation)
    if session.offer is not None:  # the model is told what may run now, before each step
        agent.model = OfferingModel(agent.model, agent, session)


def _run_with_session(
    agent: Any, run: Callable[..., Any], session: GuardSession, mediation: Mediation
) -> Callable[..., Any]:
    """Each ``run`` gets a fresh firewall and is finished after; ``reset=False`` (smolagents
    keeps its memory, ``MultiStepAgent.run``) continues the previous run: the same run
    id, its firewall state restored, its decision log's chain continued."""
    options = _run_options(run)

    def guarded_run(task: str, *args: Any, **kwargs: Any) -> Any:
        given = options(task, args, kwargs)
        mediation.adopt(agent)  # tools and managed agents added since guard()
        refuse_exposing_imports(agent, mediation.originals())
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


def _run_options(
    run: Callable[..., Any],
) -> Callable[[str, tuple[Any, ...], dict[str, Any]], Mapping[str, Any]]:
    """The named arguments of a ``run`` call, as ``Signature.bind`` gives them (a wrong
    call raises its TypeError before any run starts). ``bind`` costs some forty Python
    calls per run; a call of the task and keywords the signature knows, when every other
    parameter has a default, needs none: its keywords are the answer."""
    signature = inspect.signature(run)
    rest = list(signature.parameters.values())[1:]
    keywords = {p.name for p in rest if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    plain = len(keywords) == len(rest) and all(p.default is not p.empty for p in rest)

    def options(task: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Mapping[str, Any]:
        if plain and not args and keywords.issuperset(kwargs):
            return kwargs
        return signature.bind(task, *args, **kwargs).arguments

    return options


def _finish_after(steps: Iterator[Any], session: GuardSession) -> Generator[Any, None, None]:
    """A streamed run's steps, each run only while its run is the session's current one.

    A stream is paused between steps; another ``run`` of the agent may begin meanwhile
    (which ends this one). Resumed then, its next step would run its tools under the
    newer run's firewall (judged on that run's calls, recorded in its trace): it raises
    :class:`StreamSupersededError` instead. Closed or exhausted, it finishes its own run
    only, never the newer one."""
    mine = session.firewall  # the run just started for this stream
    try:
        while True:
            if not (session.active and session.firewall is mine):
                raise StreamSupersededError(
                    "agentguard: this streamed run ended when another run of the agent "
                    "began; its remaining steps were not run (start it again)"
                )
            try:
                step = next(steps)
            except StopIteration:
                return
            yield step
    finally:
        if session.active and session.firewall is mine:
            session.finish_run()
        close = getattr(steps, "close", None)
        if callable(close):
            close()


__all__ = [
    "ATTRIBUTE",
    "REACHING_MODULES",
    "ExposedToolsError",
    "FinalAnswerRefused",
    "StreamSupersededError",
    "ToolArgumentsError",
    "ToolCallBlocked",
    "bind_arguments",
    "guard_smolagents",
    "guarded_tool",
    "refuse_exposing_imports",
    "unique_ids",
]
