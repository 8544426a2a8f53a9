"""The smolagents tool gate: a guarded copy of each tool, whose every call (however model
code reaches it) goes through the session's execution protocol (docs/firewall.md).

What is checked is what runs: the gate names positional arguments after the tool's
``forward``, fills in the defaults its signature declares (``force: bool = True``
omitted by the model is judged as ``True``, since that is what the tool acts on), checks
that, and calls the original with the firewall's frozen snapshot
(:meth:`Decision.arguments`), never the objects model code passed.
"""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import MissingExtraError, UncheckableArgumentsError
from agentguard.guard import GuardSession, blocked_text
from agentguard.guard_shared import EXECUTING
from agentguard.trace.arguments import copy_arguments, snapshot_arguments

from ._smolagents_errors import ToolArgumentsError, ToolCallBlocked


def smolagents_module() -> Any:
    """The smolagents package, or a MissingExtraError naming the extra to install."""
    try:
        import smolagents
    except ImportError as exc:
        raise MissingExtraError("smolagents", "smolagents") from exc
    return smolagents


def guarded_tool(
    tool: Any,
    session: GuardSession,
    *,
    raise_on_block: bool,
    results: Callable[[Any], Any] | None = None,
    shape: CallShape | None = None,
) -> Any:
    """A copy of ``tool`` whose every call goes through ``session`` first; ``results``,
    if given, maps what the tool returns before the caller gets it (a tool handed back
    by a tool is guarded too); ``shape`` is :func:`call_shape` of ``tool``."""
    smolagents = smolagents_module()
    shape = call_shape(tool) if shape is None else shape
    gate = _gate(tool, session, shape, raise_on_block=raise_on_block, results=results)

    class GuardedTool(smolagents.Tool):  # type: ignore[misc, name-defined]
        skip_forward_signature_validation = True
        agentguard_guarded = True
        name = tool.name
        description = tool.description
        inputs = copy.deepcopy(tool.inputs)  # model code changing it changes no original
        output_type = tool.output_type
        output_schema = copy.deepcopy(getattr(tool, "output_schema", None))

        forward = gate  # the method itself: no frame between smolagents and the gate

    GuardedTool.__name__ = GuardedTool.__qualname__ = f"Guarded_{tool.name}"
    guarded = GuardedTool()
    guarded.is_initialized = True
    return guarded


def _gate(
    tool: Any,
    session: GuardSession,
    shape: CallShape,
    *,
    raise_on_block: bool,
    results: Callable[[Any], Any] | None,
) -> Callable[..., Any]:
    """The guarded copy's ``forward``: the call proposed and started (one session step,
    :meth:`GuardSession.propose_and_start`), run with the checked snapshot, completed."""
    name: str = tool.name
    order, defaults = shape.order, shape.defaults
    # ``Tool.__call__`` with keywords only and no sanitizing (as here) sets the tool up on
    # first use and calls ``forward``: done here directly when the class keeps that call
    plain_call = type(tool).__call__ is smolagents_module().Tool.__call__
    # a ToolCallingAgent's calls were validated by smolagents before they got here (names
    # and types against ``inputs``); a CodeAgent's never are: model code's ``force=1``
    # for a boolean ran as a forced delete while ``force = true`` judged it false, and a
    # call ``forward`` cannot take entered the trace as run. A ``__call__`` of the tool's
    # own takes what it takes.
    binds = shape.binds if plain_call and raise_on_block else None
    validate = _validator(tool) if raise_on_block else None
    propose_and_start = session.propose_and_start

    def refused(decision: Decision) -> Any:
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if raise_on_block:
            raise ToolCallBlocked(decision)
        return blocked_text(decision)

    def gate(_self: Any, /, *args: Any, **kwargs: Any) -> Any:
        # a ToolCallingAgent's call passes keywords only: ``forward``'s own new dict of them
        arguments = kwargs if not args else bind_arguments(name, order, args, kwargs)
        if defaults:
            arguments = with_defaults(arguments, defaults)
        if binds is not None:  # a call forward cannot take never runs: not checked, not run
            binds(name, arguments)
        if validate is not None:
            validate(name, arguments)
        REACHED.reached = True  # the framework got as far as the tool: not withdrawn
        started = propose_and_start(name, arguments)
        if started.action not in EXECUTING:
            return refused(started)
        given = started.arguments()  # the checked snapshot, never the caller's objects
        try:
            if plain_call and tool.is_initialized and _OWN_KEYWORD not in given:
                result = tool.forward(**given)
            else:
                result = tool(**given)
        except BaseException as exc:  # Ctrl-C inside the tool too: it began, it may have acted
            session.complete(started, error=exc)
            raise
        session.complete(started, detached(result))
        return result if results is None else results(result)

    return gate


_OWN_KEYWORD = "sanitize_inputs_outputs"
"""``Tool.__call__``'s own keyword: an argument of that name is the call's to take."""


def _validator(tool: Any) -> Callable[[str, Mapping[str, Any]], None] | None:
    """smolagents' own check of a call against the tool's declared ``inputs`` (the one a
    ToolCallingAgent's calls pass), run on the values the tool will get; a failure is a
    :class:`ToolArgumentsError` the model reads, before any check. None for a tool
    without declared inputs."""
    from smolagents.tools import validate_tool_arguments

    if not isinstance(getattr(tool, "inputs", None), dict) or not tool.inputs:
        return None

    def validate(name: str, arguments: Mapping[str, Any]) -> None:
        try:
            plain = snapshot_arguments(arguments)
        except UncheckableArgumentsError:
            return  # the firewall refuses it, naming why
        try:
            validate_tool_arguments(tool, plain)
        except (TypeError, ValueError) as exc:
            raise ToolArgumentsError(f"{name}: {exc}") from None

    return validate


@dataclass(frozen=True, slots=True)
class CallShape:
    """How a call of a tool binds to its ``forward``.

    ``order``: the names positional arguments take (``forward``'s own order, as
    ``Tool.__call__`` passes them on; the declared ``inputs`` when ``forward`` takes
    ``*args``); ``defaults``: what its signature gives declared inputs the call omits
    (a default that is not plain data, a sentinel object, is left out: the check could
    not hold it, and left out the tool still receives its own); ``names`` and
    ``required``: the keywords ``forward`` takes (None: any) and must be given.
    """

    order: list[str]
    defaults: dict[str, Any]
    names: frozenset[str] | None = None
    required: frozenset[str] = frozenset()

    def binds(self, tool: str, arguments: Mapping[str, Any]) -> None:
        """Raise :class:`ToolArgumentsError` if ``forward`` cannot take ``arguments``
        (the call would fail before the tool's body, and must not enter the trace)."""
        given = set(arguments)
        unknown = sorted(given - self.names) if self.names is not None else []
        missing = sorted(self.required - given)
        if unknown or missing:
            parts = [f"unexpected argument(s) {', '.join(unknown)}"] if unknown else []
            parts += [f"missing argument(s) {', '.join(missing)}"] if missing else []
            raise ToolArgumentsError(f"{tool}: {'; '.join(parts)}")


def call_shape(tool: Any) -> CallShape:
    """How a call of ``tool`` binds (see :class:`CallShape`)."""
    declared = list(getattr(tool, "inputs", None) or {})
    try:
        parameters = list(inspect.signature(tool.forward).parameters.values())
    except (TypeError, ValueError):  # a builtin or an object without a signature
        return CallShape(declared, {})
    if parameters and parameters[0].name == "self" and "self" not in declared:
        parameters = parameters[1:]  # ``@tool``'s forward claims a ``self`` it never takes
    kinds = inspect.Parameter
    named = (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
    if any(p.kind is kinds.VAR_POSITIONAL for p in parameters):
        order = declared
    else:
        positional = (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
        order = [p.name for p in parameters if p.kind in positional] or declared
    defaults: dict[str, Any] = {}
    for p in parameters:
        if p.name in declared and p.default is not p.empty:
            try:
                defaults[p.name] = snapshot_arguments({p.name: p.default})[p.name]
            except UncheckableArgumentsError:
                continue
    if any(p.kind in (kinds.VAR_KEYWORD, kinds.POSITIONAL_ONLY) for p in parameters):
        return CallShape(order, defaults)  # takes any keyword, or some not by keyword
    names = frozenset(p.name for p in parameters if p.kind in named)
    required = frozenset(p.name for p in parameters if p.kind in named and p.default is p.empty)
    return CallShape(order, defaults, names, required)


def with_defaults(arguments: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with each default the call omits filled in (a new dict)."""
    out = dict(arguments)
    for key, value in defaults.items():
        if key not in out:
            out[key] = value
    return out


def detached(result: Any) -> Any:
    """What the trace records of a tool's result: a copy of plain containers, so neither
    model code nor the tool changing the returned list afterwards rewrites the trace."""
    if isinstance(result, (dict, list)):
        try:
            return copy_arguments({"result": result})["result"]
        except RecursionError:  # deeper than a copy can walk: the firewall renders it
            return result
    return result


class _Reached(threading.local):
    """Per worker thread: did the current tool execution reach a guarded tool's gate?"""

    reached = False


REACHED = _Reached()


def bind_arguments(
    name: str, order: list[str], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """Name positional arguments after the tool's parameters (CodeAgent passes them)."""
    if not args:  # a ToolCallingAgent's call: keywords only
        return dict(kwargs)
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


__all__ = [
    "REACHED",
    "CallShape",
    "bind_arguments",
    "call_shape",
    "detached",
    "guarded_tool",
    "smolagents_module",
    "with_defaults",
]
