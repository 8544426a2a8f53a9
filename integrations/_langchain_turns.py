"""The model-turn side of the LangChain adapter: what a model turn changes in the graph.

Each turn's new messages are observed as dialogue events (:class:`Dialogue` reads only
what was added since the last turn); a batch of tool calls is checked at once
(``propose_batch``, each call's arguments as its tool will receive them) before any runs,
and a turn without tool calls is the final answer. So is a structured answer
(``response_format``): the model node itself answers the schema's tool call and sets
``structured_response``; the answer is proposed as ``final_answer`` with the structured
data, and refused, the model node's answer is replaced by the refusal. An answer given
beside tool calls is given when the run ends, after them: it is proposed last in the
batch and completed then (:class:`Verdict` ``pending``). :func:`turn_verdict` says what the
turn changes and :class:`ModelTurn` returns it from inside the model node
(docs/integrations.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, GuardSession, blocked_text

from ._langchain_arguments import answer_value, called_arguments
from ._langchain_calls import not_run, refusal
from ._langchain_sessions import state_value

try:
    from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


def text_of(message: AIMessage | HumanMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)


class Dialogue:
    """Where one invocation's reading of the conversation got to, so that each model turn
    reads only the messages added since the last (the history is append-only between
    turns; if it was rewritten, the whole of it is read again: the session observes each
    message once either way)."""

    __slots__ = ("_last_id", "_read")

    def __init__(self, position: Mapping[str, Any] | None = None) -> None:
        """``position``: where an earlier invocation of the run got to (:meth:`position`,
        saved in the checkpoint), or None: the conversation is read from the start."""
        self._read = 0
        self._last_id: str | None = None
        if position is not None:
            self._read, self._last_id = position["read"], position["last_id"]

    def position(self) -> dict[str, Any] | None:
        """How far the conversation has been read, for the checkpoint (None: not yet)."""
        return {"read": self._read, "last_id": self._last_id} if self._read else None

    def observe(self, session: GuardSession, history: Sequence[Any], new: Sequence[Any]) -> None:
        """The user turns the agent received (``HumanMessage``, not agentguard's own notes)
        and the model's new message, as dialogue events, each once (docs/firewall.md);
        ``history`` is the conversation before this turn's ``new`` messages."""
        read = self._read
        if not (0 < read <= len(history) and history[read - 1].id == self._last_id):
            read = 0
        for index in range(read, len(history)):
            _observe_user(session, history[index], index)
        for offset, msg in enumerate(new):
            _observe_user(session, msg, len(history) + offset)
        total = len(history) + len(new)
        last = new[-1] if new else history[-1]
        key = last.id or f"#{total - 1}"
        session.observe("assistant", text_of(last), key=key, tool_calls=len(last.tool_calls))
        self._read, self._last_id = total, last.id


def _observe_user(session: GuardSession, msg: Any, index: int) -> None:
    if isinstance(msg, HumanMessage) and msg.name != "agentguard":
        session.observe("user", text_of(msg), key=msg.id or f"#{index}")


NO_ANSWER: Final = object()
"""No structured answer in the turn."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a model turn changes in the graph: ``messages`` to add and where to jump;
    ``replaced``, the model node's own answers to its structured-output calls that a
    refusal replaces (by tool-call id); ``drop_answer``, the structured answer is
    refused (``structured_response`` is cleared); ``pending``, an allowed structured
    answer given beside tool calls, completed when the run ends with it."""

    messages: tuple[Any, ...] = ()
    jump_to: str | None = None
    replaced: Mapping[str, ToolMessage] = field(default_factory=dict)
    drop_answer: bool = False
    pending: Any = NO_ANSWER

    def update(self) -> dict[str, Any] | None:
        """The state update beside the model's messages (None: nothing to add)."""
        if not self.messages and self.jump_to is None:
            return None
        out: dict[str, Any] = {"messages": list(self.messages)}
        if self.jump_to is not None:
            out["jump_to"] = self.jump_to
        return out

    def applied(self, messages: Sequence[Any]) -> list[Any]:
        """``messages`` (the model node's) with the replaced answers swapped in."""
        if not self.replaced:
            return list(messages)
        return [
            self.replaced.get(m.tool_call_id, m) if isinstance(m, ToolMessage) else m
            for m in messages
        ]

    def state_update(self, messages: Sequence[Any]) -> dict[str, Any] | None:
        """The verdict as a node's state update after the model node wrote ``messages``
        (the replaced answers keep their message ids, so they replace, not append)."""
        update = self.update() or {}
        if self.replaced:
            swapped = [
                self.replaced[m.tool_call_id].model_copy(update={"id": m.id})
                for m in messages
                if isinstance(m, ToolMessage) and m.tool_call_id in self.replaced
            ]
            update["messages"] = [*swapped, *update.get("messages", [])]
        if self.drop_answer:
            update["structured_response"] = None
        return update or None


def turn_verdict(
    session: GuardSession,
    dialogue: Dialogue,
    history: Sequence[Any],
    new: Sequence[Any],
    *,
    tools: Mapping[str, Any] | None = None,
    structured: Any = None,
    nested: bool = False,
) -> Verdict | None:
    """What a model turn (``new``, after ``history``; or the end of ``history`` when
    ``new`` is empty) changes in the graph: None to go on (docs/integrations.md).
    ``tools`` are the agent's by name (each call is checked on its arguments as its tool
    will receive them), ``structured`` the turn's ``structured_response``. ``nested``:
    the turn of an agent invoked inside a tool call of the run (``_langchain_nesting``):
    its calls are checked, its messages and answers are not the run's."""
    found = _model_message(new) if new else _model_message(history)
    if found is None:
        return None
    index, message = found
    before = [*history, *new[:index]] if new else history[:index]
    answered = new[index + 1 :] if new else history[index + 1 :]
    own = {m.tool_call_id: m for m in answered if isinstance(m, ToolMessage)}
    calls = [c for c in message.tool_calls if c.get("id") not in own]
    if nested:  # (the run's own calls in flight are its enclosing call's: none unclaimed)
        return _check_batch(session, calls, tools, NO_ANSWER, {}) if calls else None
    # a new turn: a decision of an earlier one no call came to collect never ran
    session.withdraw_unclaimed("the framework never ran this call")
    try:
        dialogue.observe(session, before, [message])
    except RunStopped as stopped:  # a message broke a HARD_STOP constraint
        return Verdict(
            (AIMessage(content=blocked_text(stopped.decision)),), "end", drop_answer=True
        )
    if structured is None:
        if calls:
            return _check_batch(session, calls, tools, NO_ANSWER, {})
        if message.tool_calls:  # the model node refused its own structured calls: retried
            return None
        return _check_answer(session, text_of(message), {})
    answer = answer_value(structured)
    answers = {i: m for i, m in own.items() if m.status != "error"}
    if calls:
        return _check_batch(session, calls, tools, answer, answers)
    return _check_answer(session, answer, answers)


def _model_message(messages: Sequence[Any]) -> tuple[int, AIMessage] | None:
    """The model's message of the turn and where it is: the last message, or the last
    before the answers the model node gave its own structured-output calls."""
    index = len(messages) - 1
    while index >= 0 and isinstance(messages[index], ToolMessage):
        index -= 1
    if index < 0 or not isinstance(messages[index], AIMessage):
        return None
    message = messages[index]
    ids = {c.get("id") for c in message.tool_calls}
    if any(m.tool_call_id not in ids for m in messages[index + 1 :]):
        return None  # answers of a batch that ran: not a model turn
    return index, message


def _check_batch(
    session: GuardSession,
    calls: Sequence[Any],
    tools: Mapping[str, Any] | None,
    answer: Any,
    answers: Mapping[str, ToolMessage],
) -> Verdict | None:
    """The turn's tool calls (and a structured answer given beside them, last: it is
    given when the run ends, after them), checked before any runs."""
    proposed: list[tuple[str, Mapping[str, Any], str | None]] = [
        (str(c["name"]), called_arguments(tools, c), None if c.get("id") is None else str(c["id"]))
        for c in calls
    ]
    if answer is not NO_ANSWER:
        proposed.append((FINAL_TOOL, {"answer": answer}, None))
    decisions = session.propose_batch(proposed)
    stop = next((d for d in decisions if d.action is Action.STOP), None)
    if stop is not None:
        session.withdraw_unclaimed(f"a call of the same turn stopped the run ({stop.tool})")
        replies: list[Any] = [
            refusal(stop, c.get("id")) if d is stop else not_run(stop, c)
            for c, d in zip(calls, decisions, strict=False)
        ]
        answer_stopped = decisions[-1] is stop and answer is not NO_ANSWER
        replaced = {
            i: _refused(stop, m) if answer_stopped else not_run(stop, {"name": m.name, "id": i})
            for i, m in answers.items()
        }
        replies.append(AIMessage(content=blocked_text(stop)))
        return Verdict(tuple(replies), "end", replaced, drop_answer=answer is not NO_ANSWER)
    if answer is NO_ANSWER:
        return None
    decision = decisions[-1]
    if not decision.executes:  # the calls run; the answer is refused: the model goes on
        return Verdict(
            replaced={i: _refused(decision, m) for i, m in answers.items()}, drop_answer=True
        )
    return Verdict(pending=answer)


def _check_answer(
    session: GuardSession, answer: Any, answers: Mapping[str, ToolMessage]
) -> Verdict | None:
    """A final answer: text, or a structured answer (``answers``: the model node's own
    messages answering its structured-output call, which a refusal replaces)."""
    structured = not isinstance(answer, str) or bool(answers)
    decision = session.propose(FINAL_TOOL, {"answer": answer})
    if decision.executes:
        decision = session.start(decision)
    if decision.action is Action.STOP:
        replaced = {i: _refused(decision, m) for i, m in answers.items()}
        stopped = (AIMessage(content=blocked_text(decision)),)
        return Verdict(stopped, "end", replaced, drop_answer=structured)
    if not decision.executes:
        if answers:  # the refusal answers the structured call: the model reads it there
            replaced = {i: _refused(decision, m) for i, m in answers.items()}
            return Verdict((), "model", replaced, drop_answer=True)
        note = HumanMessage(content=blocked_text(decision), name="agentguard")
        return Verdict((note,), "model", drop_answer=structured)
    session.complete(decision, answer)
    return None


def _refused(decision: Decision, answer: ToolMessage) -> ToolMessage:
    """The refusal that replaces the model node's answer to its structured-output call
    (under that call's name: the model reads it where it gave the answer)."""
    message = refusal(decision, answer.tool_call_id)
    return message.model_copy(update={"name": answer.name})


def finish_answer(session: GuardSession, answer: Any) -> Decision:
    """A final answer the run ends with (a structured answer given beside tool calls, a
    ``return_direct`` tool's output): proposed (an allowed decision of its turn is
    collected), started and completed; the decision (a refusal, or the one it ran under)."""
    decision = session.propose(FINAL_TOOL, {"answer": answer})
    if decision.executes:
        decision = session.start(decision)
        if decision.executes:
            session.complete(decision, answer)
    return decision


class ModelTurn:
    """One model turn, seen from inside the model node: the verdict on the model's
    response, and for an agent without tools the answers asked for again after a refusal.
    """

    def __init__(
        self,
        session: GuardSession,
        dialogue: Dialogue,
        request: Any,
        tools: Mapping[str, Any] | None = None,
        *,
        nested: bool = False,
    ) -> None:
        self.session = session
        self.dialogue = dialogue
        self.nested = nested
        self.request = request
        self.tools = tools
        self.history: Sequence[Any] = state_value(request.state, "messages") or []
        self.earlier: list[Any] = []  # refused answers and the notes that refused them
        self.retries = 0
        self.response: Any = None
        self.verdict: Verdict | None = None

    def checked(self, response: Any) -> Any:
        """Check the model's response; the request to send the model again, or None."""
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        history = [*self.history, *self.earlier] if self.earlier else self.history
        verdict = turn_verdict(
            self.session,
            self.dialogue,
            history,
            response.result,
            tools=self.tools,
            structured=response.structured_response,
            nested=self.nested,
        )
        if verdict is not None and (verdict.replaced or verdict.drop_answer):
            response = ModelResponse(
                result=verdict.applied(response.result),
                structured_response=None if verdict.drop_answer else response.structured_response,
            )
        self.response, self.verdict = response, verdict
        if verdict is None or verdict.jump_to != "model" or self.request.tools:
            return None
        # An agent without tools has no tool node, and its model node's edge leads to the
        # end only (jump_to is not read there): the refused answer is asked for again here.
        self.earlier.extend([*response.result, *verdict.messages])
        self.retries += 1
        if 3 * self.retries >= _recursion_limit():  # the graph's bound (3 steps a loop)
            from langgraph.errors import GraphRecursionError

            raise GraphRecursionError("the model's answers were refused too many times")
        return self.request.override(messages=[*self.request.messages, *self.earlier])

    def result(self, extra: Mapping[str, Any] | None = None) -> Any:
        """What the model node returns: the response, with the verdict (and ``extra``
        state, such as the checkpoint) as a Command."""
        response = self.response
        if self.earlier:
            response = ModelResponse(
                result=[*self.earlier, *response.result],
                structured_response=response.structured_response,
            )
        update = None if self.verdict is None else self.verdict.update()
        if extra is not None:
            update = {**extra, **(update or {})}
        if update is None:
            return response
        return ExtendedModelResponse(model_response=response, command=Command(update=update))


def _recursion_limit() -> int:
    from langgraph.config import get_config

    try:
        return int(get_config().get("recursion_limit", 25))
    except RuntimeError:  # outside a runnable context
        return 25


__all__ = [
    "NO_ANSWER",
    "Dialogue",
    "ModelTurn",
    "Verdict",
    "finish_answer",
    "text_of",
    "turn_verdict",
]
