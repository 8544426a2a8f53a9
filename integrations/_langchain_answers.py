"""Final answers a LangChain agent gives when its run ends, not at a model turn.

A model turn without tool calls, or with only a structured answer, is checked at that turn
(``_langchain_turns``). Two answers are given later, when the graph ends after the tool
node, and are checked then, in ``after_agent``, before the run is finished:

* a structured answer (``response_format=ToolStrategy(...)``) given beside tool calls:
  LangChain runs the calls, then ends with the answer; it was proposed last in its turn's
  batch and is started and completed now (a call it relied on may have failed since);
* the output of ``return_direct`` tools: when every tool of the last batch that ran has
  ``return_direct``, LangChain ends the run with their output as the answer; it is
  proposed as ``final_answer`` (their text) and the trace shows it after them.

Refused, the answer is withdrawn (``structured_response`` cleared) and the model is asked
again, as for a refused text answer; stopped, the run ends with the refusal.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.enforcement.decision import Action
from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession, blocked_text

from ._langchain_sessions import state_value
from ._langchain_tools import ToolGate
from ._langchain_turns import NO_ANSWER, Verdict, finish_answer

try:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


class Answers:
    """Per session: the agent's tools as its last model turn had them, and the answer
    its run will end with, if one was given beside tool calls."""

    def __init__(self, gate: ToolGate) -> None:
        self._gate = gate
        self._lock = threading.Lock()
        self._pending: weakref.WeakKeyDictionary[GuardSession, Any] = weakref.WeakKeyDictionary()
        self._tools: weakref.WeakKeyDictionary[GuardSession, dict[str, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def turn(self, session: GuardSession, tools: Sequence[Any] | None) -> dict[str, Any] | None:
        """A model turn begins: what an earlier turn left for the run's end did not end it.
        Returns the agent's tools by name (``tools``, the model request's; None: those of
        the session's last model turn)."""
        self._gate.new_turn(session)
        with self._lock:
            self._pending.pop(session, None)
            if tools is None:
                return self._tools.get(session)
            named = {str(t.name): t for t in tools if not isinstance(t, Mapping)}
            self._tools[session] = named
            return named

    def noted(self, session: GuardSession, verdict: Verdict | None) -> None:
        """The turn's verdict: an answer given beside tool calls waits for the run's end."""
        if verdict is not None and verdict.pending is not NO_ANSWER:
            with self._lock:
                self._pending[session] = verdict.pending

    def at_end(self, session: GuardSession, state: Any) -> dict[str, Any] | None:
        """The answer the run ends with, if it is given only now: checked and recorded.
        None when the run may end; else the state update (the refusal, where to jump)."""
        with self._lock:
            pending = self._pending.pop(session, NO_ANSWER)
        structured = pending is not NO_ANSWER
        answer = pending if structured else _returned_directly(self._gate, session, state)
        if answer is NO_ANSWER:
            return None
        self._gate.new_turn(session)
        decision = finish_answer(session, answer)
        if decision.executes:
            return None
        update: dict[str, Any] = {"structured_response": None} if structured else {}
        if decision.action is Action.STOP:
            update["messages"] = [AIMessage(content=blocked_text(decision))]
            return update
        note = HumanMessage(content=blocked_text(decision), name="agentguard")
        return {**update, "messages": [note], "jump_to": "model"}


def _returned_directly(gate: ToolGate, session: GuardSession, state: Any) -> Any:
    """The run's answer when it ends with ``return_direct`` outputs: the text of the
    tool messages after the model's last message, each of a call that ran with
    ``return_direct`` (a refused call's message is no output); else no answer."""
    ran = gate.returned_directly(session)
    if not ran:
        return NO_ANSWER
    messages = state_value(state, "messages") or []
    tail: list[Any] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        tail.append(message)
    outputs = [ran[m.tool_call_id] for m in reversed(tail) if m.tool_call_id in ran]
    if not outputs:
        return NO_ANSWER
    return outputs[0] if len(outputs) == 1 else "\n".join(str(o) for o in outputs)


__all__ = ["Answers"]
