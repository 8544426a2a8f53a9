"""The smolagents model-turn side: each ToolCallingAgent turn checked as one batch before
any of it runs, calls smolagents never ran withdrawn, and the final answer gated."""

from __future__ import annotations

import enum
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from typing import Any

from agentguard.enforcement.decision import Action, RunStopped
from agentguard.guard import FINAL_TOOL, GuardSession, blocked_text

from ._smolagents_errors import FinalAnswerRefused
from ._smolagents_tools import REACHED


def final_answer_check(session: GuardSession) -> Callable[..., bool]:
    def agentguard_final_answer(
        final_answer: Any,
        memory: Any = None,  # noqa: ARG001 - smolagents passes it
        agent: Any = None,  # noqa: ARG001
    ) -> bool:
        arguments = {"answer": _plain(final_answer)}
        decision = session.propose_and_start(FINAL_TOOL, arguments)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            raise FinalAnswerRefused(blocked_text(decision))
        session.complete(decision, decision.arguments().get("answer"))
        return True

    return agentguard_final_answer


def last_answer_checked(
    handle: Callable[[str], Any], session: GuardSession
) -> Callable[[str], Any]:
    """At max steps smolagents asks the model for an answer and skips final_answer_checks;
    it is checked here instead, and with no step left to fix it, a refusal stops the run."""

    def handle_max_steps(task: str) -> Any:
        answer = handle(task)
        arguments = {"answer": _plain(answer)}
        decision = session.propose_and_start(FINAL_TOOL, arguments)
        if not decision.executes:
            note = f"max steps reached and the final answer is refused: {decision.message}"
            raise RunStopped(replace(decision, action=Action.STOP, message=note))
        session.complete(decision, decision.arguments().get("answer"))
        return answer

    return handle_max_steps


def _plain(value: Any) -> Any:
    """What the final answer's check judges: smolagents' ``AgentText`` (a str subclass)
    as the text it wraps; an answer whose text a ``__str__``, ``__repr__`` or
    ``__format__`` of its own decides (a model-defined ``str`` subclass: the check would
    read its characters, the caller whatever the method says then) as an
    :class:`AnswerReadingOtherwise`, which the firewall refuses."""
    if isinstance(value, str) and hasattr(value, "to_raw"):  # AgentText
        value = value.to_raw()
    if not _faithful(value, ANSWER_DEPTH, [ANSWER_BUDGET]):
        return AnswerReadingOtherwise()
    return str.__str__(value) if isinstance(value, str) else value


ANSWER_DEPTH = 100
"""How deep in a final answer (lists and dicts) values are looked at."""
ANSWER_BUDGET = 100_000
"""How many values of a final answer are looked at, at most (the rest are the check's)."""


class AnswerReadingOtherwise:
    """Stands, in the final answer's check, for an answer holding a text or number whose
    own ``__str__``, ``__repr__`` or ``__format__`` decides how it reads: the check would
    judge one text and the caller read another, so the firewall refuses it (an object
    it cannot hold); the model is told, and answers again."""


def _faithful(value: Any, depth: int, budget: list[int]) -> bool:
    budget[0] -= 1
    kind = type(value)
    if kind in _EXACT or depth <= 0 or budget[0] <= 0:
        return True  # the firewall's own check has the last word past these bounds
    if kind is list or kind is tuple:
        return all(_faithful(v, depth - 1, budget) for v in value)
    if kind is dict:
        return all(_faithful(v, depth - 1, budget) for v in value.values())
    for base in (str, int, float):
        if isinstance(value, base) and not isinstance(value, enum.Enum):
            return all(getattr(kind, m) is getattr(base, m) for m in _READERS)
    return True


_EXACT = frozenset((str, int, float, bool, type(None)))
_READERS = ("__str__", "__repr__", "__format__")


Fill = Callable[[str, Any], dict[str, Any] | None]
"""The arguments of a call of the named tool as its gate will propose them (a value that
is not a dict named after the first parameter, the defaults its ``forward`` declares
filled in): the batch is checked on those. None: the gate refuses the call before any
check (it never runs), so it is not proposed."""


def batch_checked(
    process_tool_calls: Callable[[Any, Any], Iterator[Any]],
    agent: Any,
    session: GuardSession,
    fill: Fill,
) -> Callable[[Any, Any], Generator[Any, None, None]]:
    """Check a model turn's calls as one batch before any of it runs, each on the
    arguments its tool will be given (so its gate collects that very decision)."""

    def process(chat_message: Any, memory_step: Any) -> Generator[Any, None, None]:
        tool_calls = chat_message.tool_calls or ()
        if len(tool_calls) > 1:  # one call's id cannot repeat
            unique_ids(tool_calls)
        tools = agent.tools
        calls = []
        for c in tool_calls:  # a loop, not a comprehension: no frame per turn
            function = c.function
            name = function.name
            if name != FINAL_TOOL and name in tools:
                # smolagents runs ``execute_tool_call(name, arguments or {})``: a falsy
                # value (null, "", 0, false, []) is no argument at all
                arguments = function.arguments or {}
                if type(arguments) is dict and getattr(agent, "state", None):
                    arguments = _arguments(agent, arguments)  # else _arguments' answer
                filled = fill(name, arguments)
                if filled is not None:
                    calls.append((name, filled, str(c.id)))
        if calls:
            for decision in session.propose_batch(calls):  # a loop: no generator per turn
                if decision.action is _STOP:
                    reason = f"a call of the same turn stopped the run ({decision.tool})"
                    session.withdraw_unclaimed(reason)
                    raise RunStopped(decision)
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


def withdraw_unrun(
    execute: Callable[[str, Any], Any], agent: Any, session: GuardSession, fill: Fill
) -> Callable[[str, Any], Any]:
    """smolagents validates a call's arguments before running the tool; a call that never
    reached its tool (rejected arguments) is withdrawn, so its approval does not linger."""

    def execute_tool_call(tool_name: str, arguments: Any) -> Any:
        # read only here, after this reset: a gate since then set it (no reset after:
        # a nested execution, a managed agent's, resets it first too)
        REACHED.reached = False
        try:
            return execute(tool_name, arguments)
        except Exception as exc:
            if not REACHED.reached and tool_name in agent.tools and tool_name != FINAL_TOOL:
                filled = fill(tool_name, _arguments(agent, arguments))
                if filled is not None:
                    session.withdraw_predecided(
                        tool_name, filled, f"smolagents did not run it: {type(exc).__name__}: {exc}"
                    )
            raise

    return execute_tool_call


_STOP = Action.STOP


def _arguments(agent: Any, arguments: Any) -> Any:
    """The arguments the tool will be given: smolagents replaces a string value naming a
    key of ``agent.state`` by its value (``_substitute_state_variables``). With no state
    there is nothing to replace, and the model's own dict is handed on as it is: the
    firewall copies what it decides on (the tool gets smolagents' own copy, whose values
    are the very same objects). Anything but a dict is handed on as it is too (smolagents
    decoded the model's JSON text already, ``parse_json_if_needed``; text that is not
    JSON stays text): the tool gets it as its one positional argument (``Fill``)."""
    if not isinstance(arguments, dict) or not getattr(agent, "state", None):
        return arguments
    substituted = agent._substitute_state_variables(arguments)
    if type(substituted) is dict:  # smolagents builds a new one: nothing else holds it
        return substituted
    return dict(substituted) if isinstance(substituted, dict) else substituted


__all__ = [
    "batch_checked",
    "final_answer_check",
    "last_answer_checked",
    "unique_ids",
    "withdraw_unrun",
]
