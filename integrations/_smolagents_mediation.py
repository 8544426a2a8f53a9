"""Complete mediation for one guarded smolagents agent tree: every tool that can run is a
guarded copy, wherever it is looked up, and nothing model code can reach leads to the
guard.

A :class:`Mediation` is held only in closures (the guarded agent's ``run`` and hooks, the
sealed executors' methods), never as an attribute of an object model code can reach:

* **Tools are guarded where they are looked up, at each use**: a CodeAgent's executor is
  sealed (:meth:`Mediation.seal`): before each code action its tool table and variables
  are checked, and any smolagents ``Tool`` found there unguarded (appended to
  ``agent.tools`` or sent to the executor mid-run, by a step callback or a tool) is
  replaced by a guarded copy; a ToolCallingAgent's ``execute_tool_call`` guards the tool
  it is about to run (:meth:`Mediation.ensure`).
* **Managed agents are guarded like the manager** (their tools, their executors, their
  authorised imports), and model code holds them only as a closure-held callable
  (:func:`managed_agent_call`): ``helper.agentguard``, ``helper.tools``,
  ``helper.memory``, ``helper.python_executor`` do not exist for it.
* **Model code cannot walk to the guard**: each code action is checked first
  (:func:`check_code`: no frames, no tracebacks' frames, no computed attribute names),
  and the executor's ``getattr`` and ``setattr`` refuse the same names.
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Callable
from typing import Any

from agentguard.guard import FINAL_TOOL, GuardSession, UnsupportedAgentError

from ._smolagents_code import check_code, strict_builtins
from ._smolagents_errors import ToolArgumentsError
from ._smolagents_exposure import refuse, refuse_imports
from ._smolagents_tools import CallShape, bind_arguments, call_shape, guarded_tool, with_defaults

ATTRIBUTE = "agentguard"
"""The attribute of a guarded agent holding its :class:`GuardSession` (the agent passed
to ``guard()`` only: the agents it manages never carry it)."""

VARIABLES_DEPTH = 4
"""How deep inside a run's variables (containers in containers) tools are looked for."""
VARIABLES_BUDGET = 10_000
"""How many values of a run's variables are looked at, at most, for tools."""

ADOPTED: weakref.WeakSet[Any] = weakref.WeakSet()
"""Agents guarded as part of a guarded tree (guarding one again is refused)."""


def guarded_on_its_own(agent: Any) -> bool:
    """Was ``agent`` guarded by a ``guard()`` call of its own (its own spec and session)?"""
    return isinstance(getattr(agent, ATTRIBUTE, None), GuardSession)


def shared(agent: Any) -> list[Any]:
    """``agent`` and the agents it manages that would share its guard (at any depth; not
    those guarded on their own, nor what they manage)."""
    out: dict[int, Any] = {}
    todo = [agent]
    while todo:
        each = todo.pop()
        if id(each) in out or (each is not agent and guarded_on_its_own(each)):
            continue
        out[id(each)] = each
        todo.extend(dict(each.managed_agents).values())
    return list(out.values())


class Mediation:
    """The guarded copies, managed-agent callables and sealed executors of one tree."""

    def __init__(self, session: GuardSession, smolagents: Any) -> None:
        self.session = session
        self._smolagents = smolagents
        self._lock = threading.RLock()  # a ToolCallingAgent guards tools from its threads
        self._copies: dict[tuple[int, bool], Any] = {}  # (id(original), raises) -> copy
        self._ours: dict[int, Any] = {}  # id -> a guarded copy or callable this made
        self._originals: dict[int, Any] = {}  # id -> original tool (kept: ids stay unique)
        self._agents: dict[int, Any] = {}  # id -> an agent of the tree, hooks installed
        self._callables: dict[int, Any] = {}  # id(agent) -> what model code holds of it
        self._exposure: dict[int, tuple[tuple[str, ...], int]] = {}  # id(executor) -> checked
        self._imports: set[tuple[str, tuple[tuple[str, ...], int]]] = set()  # looked at
        self._strict: dict[str, Callable[..., Any]] = {}
        self._kinds = (smolagents.Tool, smolagents.MultiStepAgent)
        self._shapes: dict[int, CallShape] = {}  # id(guarded copy) -> how a call binds

    # the tree -------------------------------------------------------------------
    def adopt(self, agent: Any) -> None:
        """Guard ``agent`` and every agent it manages (those not guarded on their own),
        and guard their tools; again at each run (tools and agents added since)."""
        with self._lock:
            for each in shared(agent):  # one guarded on its own is its guard's to mediate
                self._install(each)
                self._guard_tools(each)
                if isinstance(each, self._smolagents.CodeAgent):
                    self.seal(each)  # again: an executor replaced since is sealed too

    def _install(self, agent: Any) -> None:
        if id(agent) in self._agents:
            return
        smolagents = self._smolagents
        if getattr(agent, "executor_type", "local") != "local":
            raise UnsupportedAgentError(
                f"the CodeAgent {agent.name!r} has executor_type={agent.executor_type!r}: "
                "it runs its tools in another process, out of the guard's reach; "
                "agentguard supports executor_type='local'"
            )
        self._agents[id(agent)] = agent
        ADOPTED.add(agent)
        if isinstance(agent, smolagents.ToolCallingAgent):
            agent.execute_tool_call = self.ensuring(agent, agent.execute_tool_call)

    def _guard_tools(self, agent: Any) -> None:
        raises = isinstance(agent, self._smolagents.CodeAgent)
        tools = agent.tools
        for name, tool in list(tools.items()):
            if name != FINAL_TOOL and id(tool) not in self._ours:
                tools[name] = self.guarded(tool, raises=raises)

    def guarded(self, tool: Any, *, raises: bool) -> Any:
        """The guarded copy of ``tool`` (one per tool and kind of agent)."""
        with self._lock:
            if id(tool) in self._ours:
                return tool
            key = (id(tool), raises)
            found = self._copies.get(key)
            if found is None:
                shape = call_shape(tool)
                results = self._handed_back if raises else None
                found = guarded_tool(
                    tool, self.session, raise_on_block=raises, results=results, shape=shape
                )
                self._copies[key] = found
                self._ours[id(found)] = found
                self._shapes[id(found)] = shape
                self._originals[id(tool)] = tool
            return found

    def filler(self, agent: Any) -> Callable[[str, Any], dict[str, Any] | None]:
        """For ``agent``'s batch check: a call's arguments as the gate of the tool it
        names will propose them (the tool guarded first, if it was added mid-run), or
        None for a call its gate refuses before any check (it never runs).

        Arguments that are not a dict (text that is not JSON, a JSON list or number)
        are handed to the tool as its one positional argument (``tool(arguments)``), and
        the gate names it after the first parameter: so are they named here, or the
        batch would approve a call that never runs beside the one that does."""

        ours, shapes = self._ours, self._shapes

        def fill(name: str, arguments: Any) -> dict[str, Any] | None:
            tool = agent.tools.get(name)
            if id(tool) not in ours:  # added since: guarded now (the usual call skips this)
                self.ensure(agent, name)
                tool = agent.tools.get(name)
            shape = shapes.get(id(tool))
            named: dict[str, Any]
            if type(arguments) is dict:
                named = arguments
            elif shape is None:
                return None
            else:
                try:
                    named = bind_arguments(name, shape.order, (arguments,), {})
                except ToolArgumentsError:
                    return None
            if shape is None or not shape.defaults:
                return named
            return with_defaults(named, shape.defaults)

        return fill

    def _handed_back(self, result: Any) -> Any:
        """What model code gets of a tool's result: a tool or an agent a tool returns is
        guarded (or held as a callable) like one found in the executor's table."""
        return self._mediated(result) if isinstance(result, self._kinds) else result

    def originals(self) -> list[Any]:
        with self._lock:
            return list(self._originals.values())

    # a ToolCallingAgent: the tool it is about to run ------------------------------
    def ensuring(self, agent: Any, execute: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """``execute_tool_call`` guarding, first, the tool or managed agent it will run."""

        ours = self._ours

        def execute_tool_call(tool_name: str, arguments: Any) -> Any:
            tool = agent.tools.get(tool_name)
            if (tool is not None and id(tool) not in ours) or tool_name in agent.managed_agents:
                self.ensure(agent, tool_name)  # the usual call, a guarded tool, skips this
            return execute(tool_name, arguments)

        return execute_tool_call

    def ensure(self, agent: Any, name: str) -> None:
        """The tool ``agent`` runs as ``name`` is a guarded copy; a managed agent of that
        name is adopted (both may have been added mid-run)."""
        tool = agent.tools.get(name)
        if tool is not None and name != FINAL_TOOL and id(tool) not in self._ours:
            guarded = self.guarded(tool, raises=isinstance(agent, self._smolagents.CodeAgent))
            agent.tools[name] = guarded
        managed = agent.managed_agents.get(name)
        fresh = managed is not None and id(managed) not in self._agents
        if fresh and not guarded_on_its_own(managed):
            self.adopt(managed)

    # a CodeAgent: its executor --------------------------------------------------------
    def seal(self, agent: Any) -> None:
        """Make ``agent``'s executor check each code action and guard its tool table
        first (its class is swapped for a subclass: smolagents calls the executor)."""
        executor = getattr(agent, "python_executor", None)
        if executor is None or id(executor) in self._ours:
            return
        base = type(executor)
        mediation = self

        class GuardedExecutor(base):  # type: ignore[misc, valid-type]
            def __call__(self, code_action: str) -> Any:
                mediation.before_code(self, agent, code_action)
                return base.__call__(self, code_action)

            def send_tools(self, tools: dict[str, Any]) -> None:
                base.send_tools(self, tools)
                mediation.table(self)

            def send_variables(self, variables: dict[str, Any]) -> None:
                base.send_variables(self, variables)
                mediation.variables(self)

        GuardedExecutor.__name__ = GuardedExecutor.__qualname__ = f"Guarded{base.__name__}"
        try:
            executor.__class__ = GuardedExecutor
        except TypeError as exc:
            raise UnsupportedAgentError(
                f"agentguard cannot guard the executor {base.__qualname__} of {agent.name!r}: {exc}"
            ) from exc
        self._ours[id(executor)] = executor
        if getattr(executor, "static_tools", None) is not None:
            self.table(executor)

    def before_code(self, executor: Any, agent: Any, code: str) -> None:
        """Before a code action runs: the code checked, the table guarded, the imports
        checked against every tool guarded so far (a refusal here is shown to the model,
        and its code does not run)."""
        imported = check_code(code)
        self.table(executor)
        authorised = tuple(getattr(executor, "authorized_imports", ()) or ())
        checked = (authorised, len(self._originals))
        if self._exposure.get(id(executor)) != checked:
            refuse(authorised, self.originals(), agent)
            self._exposure[id(executor)] = checked
        fresh = [m for m in imported if (m, checked) not in self._imports]
        if fresh:  # modules first imported now could not be looked at before
            refuse_imports(fresh, authorised, self.originals(), agent)
            self._imports.update((m, checked) for m in fresh)

    def table(self, executor: Any) -> None:
        """Guard the executor's tool table and variables in place: a tool a guarded copy,
        an agent its callable, ``getattr`` and ``setattr`` the strict ones."""
        with self._lock:
            tools = getattr(executor, "static_tools", None)
            if isinstance(tools, dict):
                self._mediate(tools)
                if not self._strict:
                    base = self._smolagents.local_python_executor.nodunder_getattr
                    self._strict = strict_builtins(base)
                tools.update(self._strict)
            state = getattr(executor, "state", None)
            if isinstance(state, dict):
                self._mediate(state)

    def variables(self, executor: Any) -> None:
        """The variables a run hands model code (``agent.state``, ``additional_args``):
        tools and agents guarded inside containers too (a ``{"kit": {"wipe": tool}}``)."""
        state = getattr(executor, "state", None)
        if isinstance(state, dict):
            with self._lock:
                budget = [VARIABLES_BUDGET]
                for name, value in list(state.items()):
                    state[name] = self._within(value, VARIABLES_DEPTH, budget)

    def _within(self, value: Any, depth: int, budget: list[int]) -> Any:
        """``value`` with the tools and agents in it (lists and dicts changed in place,
        tuples rebuilt) mediated, ``depth`` containers down, ``budget`` values at most."""
        budget[0] -= 1
        if isinstance(value, self._kinds):
            return self._mediated(value)
        if depth <= 0 or budget[0] <= 0:
            return value
        if type(value) is dict:
            for key, item in list(value.items()):
                value[key] = self._within(item, depth - 1, budget)
        elif type(value) is list:
            value[:] = [self._within(item, depth - 1, budget) for item in value]
        elif type(value) is tuple:
            return tuple(self._within(item, depth - 1, budget) for item in value)
        return value

    def _mediate(self, names: dict[str, Any]) -> None:
        for name, value in list(names.items()):
            if name != FINAL_TOOL and isinstance(value, self._kinds):
                names[name] = self._mediated(value)

    def _mediated(self, value: Any) -> Any:
        """A tool's guarded copy, an agent's callable (ours are returned as they are)."""
        if id(value) in self._ours:
            return value
        if isinstance(value, self._smolagents.Tool):
            return self.guarded(value, raises=True)
        return self.callable_for(value)

    def callable_for(self, agent: Any) -> Any:
        """What model code holds of a managed agent: a callable keeping it in a closure
        (the agent adopted first, unless guarded on its own)."""
        with self._lock:
            found = self._callables.get(id(agent))
            if found is None:
                if not guarded_on_its_own(agent):
                    self.adopt(agent)
                found = managed_agent_call(agent)
                self._callables[id(agent)] = found
                self._ours[id(found)] = found
                self._agents.setdefault(id(agent), agent)  # kept: ids stay unique
            return found


def managed_agent_call(agent: Any) -> Any:
    """A stand-in for a managed agent in model code: its name, description, inputs and
    output type (copies), and a call that runs it; the agent itself only in a closure.

    The executor hands model code a ``functools.wraps`` wrapper of each tool, which copies
    the instance's ``__dict__``: the agent's own held ``agentguard``, ``tools``,
    ``memory``...; this one's holds the four copies only."""
    run = agent.__call__

    class ManagedAgent:
        def __init__(self) -> None:
            self.name = agent.name
            self.description = agent.description
            self.inputs = copy.deepcopy(getattr(agent, "inputs", {}))
            self.output_type = getattr(agent, "output_type", "string")

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return run(*args, **kwargs)

    ManagedAgent.__name__ = ManagedAgent.__qualname__ = f"ManagedAgent_{agent.name}"
    return ManagedAgent()


__all__ = [
    "ADOPTED",
    "ATTRIBUTE",
    "Mediation",
    "guarded_on_its_own",
    "managed_agent_call",
    "shared",
]
