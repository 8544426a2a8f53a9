"""The model-turn side of the LangChain adapter: what a model turn changes in the graph.

Each turn's new messages are observed as dialogue events (:class:`Dialogue` reads only
what was added since the last turn); a batch of tool calls is checked at once
(``propose_batch``) before any runs, and a turn without tool calls is the final answer.
:func:`turn_verdict` returns the state update (refusal messages, ``jump_to``) and
:class:`ModelTurn` returns it from inside the model node (docs/integrations.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.enforcement.decision import Action, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, GuardSession, blocked_text
from agentguard.trace.refusal import is_refusal

from ._langchain_sessions import state_value
from ._langchain_tools import not_run, refusal, result_of

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


def record_calls_run_elsewhere(
    session: GuardSession, history: Sequence[Any], position: Mapping[str, Any] | None
) -> None:
    """Record the calls that ran before this session took over the run and that the
    checkpoint it was restored from does not hold, so the trace holds every call that ran.

    The checkpoint is saved at each model turn, before the model answers, so the calls of
    the batches answered after the point it had read the conversation to (``position``)
    ran after it: the siblings of a tool that called ``interrupt()`` (LangGraph does not
    run them again when the thread is resumed in another process), or a whole batch
    whose next model call crashed before ``invoke(None)`` resumed it elsewhere. Without
    a position it can trust (an older checkpoint, a rewritten history), only the last
    batch is looked at, and only if this session decided some of its calls (it took that
    batch over). A call this session decided, or whose answer is a refusal (its marker
    line), is not recorded. They enter the trace now, after the calls this process ran,
    each with its answer as its result (an error answer as its error), as the tool gate
    records an answer."""
    known = {d.tool_call_id for d in session.attempts}
    read = _trusted_read(history, position)
    if read is not None:
        batches = _answered_batches(history, read)
    else:
        batch, answers = _last_answered_batch(history)
        if batch is None or not any(c.get("id") in known for c in batch.tool_calls):
            return  # not a batch this session took part in
        batches = [(batch, answers)]
    for batch, answers in batches:
        for tool_call in batch.tool_calls:
            call_id = tool_call.get("id")
            answer = answers.get(call_id) if call_id is not None else None
            if answer is None or call_id in known:
                continue
            result = result_of(answer)
            if is_refusal(result):
                continue
            error = str(result) if answer.status == "error" else None
            args = tool_call.get("args") or {}
            session.record(str(tool_call["name"]), args, result, error=error)


def _trusted_read(history: Sequence[Any], position: Mapping[str, Any] | None) -> int | None:
    """``position``'s count of messages read, when ``history`` still starts as it did
    (the last message read is where it was); else None."""
    if position is None:
        return None
    read = position.get("read")
    if type(read) is not int or not 0 <= read <= len(history):
        return None
    if read == 0:  # saved before anything was read or run (see ``_position``)
        return 0
    return read if history[read - 1].id == position.get("last_id") else None


def _answered_batches(history: Sequence[Any], read: int) -> list[tuple[AIMessage, dict[str, Any]]]:
    """The model messages from ``read`` on with tool calls, each with the answers that
    follow it (before the next model message) by call id."""
    out: list[tuple[AIMessage, dict[str, Any]]] = []
    ids: set[Any] = set()  # the call ids of the model message the answers follow
    for message in history[read:]:
        if isinstance(message, AIMessage):
            ids = {c.get("id") for c in message.tool_calls}
            if ids:
                out.append((message, {}))
        elif isinstance(message, ToolMessage) and message.tool_call_id in ids:
            out[-1][1].setdefault(message.tool_call_id, message)
    return out


def _last_answered_batch(history: Sequence[Any]) -> tuple[AIMessage | None, dict[str, Any]]:
    """The last model message whose tool calls have answers after it, and those answers
    by call id (ids are matched after their message only: a provider, or a scripted
    model in a new process, may use an id again)."""
    later: dict[str, Any] = {}
    for message in reversed(history):
        if isinstance(message, ToolMessage):
            later.setdefault(message.tool_call_id, message)
        elif isinstance(message, AIMessage) and message.tool_calls:
            ids = {c.get("id") for c in message.tool_calls}
            answers = {i: m for i, m in later.items() if i in ids}
            if answers:
                return message, answers
            later.clear()  # answers further up belong to earlier messages
    return None, {}


def turn_verdict(
    session: GuardSession, dialogue: Dialogue, history: Sequence[Any], new: Sequence[Any]
) -> dict[str, Any] | None:
    """What a model turn (``new``, after ``history``) changes in the graph state: None to
    go on, else the refusals to add and where to jump (docs/integrations.md)."""
    last = new[-1] if new else (history[-1] if history else None)
    if not isinstance(last, AIMessage):
        return None
    try:
        dialogue.observe(session, history, new)
    except RunStopped as stopped:  # a message broke a HARD_STOP constraint
        return {"messages": [AIMessage(content=blocked_text(stopped.decision))], "jump_to": "end"}
    if last.tool_calls:
        return _check_batch(session, last)
    return _check_answer(session, last)


def _check_batch(session: GuardSession, message: AIMessage) -> dict[str, Any] | None:
    calls = [  # the firewall copies the arguments onto its decisions: not copied here
        (str(c["name"]), c.get("args") or {}, None if c.get("id") is None else str(c["id"]))
        for c in message.tool_calls
    ]
    decisions = session.propose_batch(calls)
    for stop in decisions:
        if stop.action is Action.STOP:
            break
    else:
        return None
    session.withdraw_unclaimed(f"a call of the same turn stopped the run ({stop.tool})")
    replies: list[Any] = [
        refusal(stop, c.get("id")) if (d is stop) else not_run(stop, c)
        for c, d in zip(message.tool_calls, decisions, strict=True)
    ]
    replies.append(AIMessage(content=blocked_text(stop)))
    return {"messages": replies, "jump_to": "end"}


def _check_answer(session: GuardSession, message: AIMessage) -> dict[str, Any] | None:
    args = {"answer": text_of(message)}
    decision = session.propose(FINAL_TOOL, args)
    if decision.action is Action.STOP:
        return {"messages": [AIMessage(content=blocked_text(decision))], "jump_to": "end"}
    if decision.executes:
        decision = session.start(decision)
    if decision.action is Action.STOP:
        return {"messages": [AIMessage(content=blocked_text(decision))], "jump_to": "end"}
    if not decision.executes:
        note = HumanMessage(content=blocked_text(decision), name="agentguard")
        return {"messages": [note], "jump_to": "model"}
    session.complete(decision, args["answer"])
    return None


class ModelTurn:
    """One model turn, seen from inside the model node: the verdict on the model's
    response, and for an agent without tools the answers asked for again after a refusal.
    """

    def __init__(self, session: GuardSession, dialogue: Dialogue, request: Any) -> None:
        self.session = session
        self.dialogue = dialogue
        self.request = request
        self.history: Sequence[Any] = state_value(request.state, "messages") or []
        self.earlier: list[Any] = []  # refused answers and the notes that refused them
        self.retries = 0
        self.response: Any = None
        self.update: dict[str, Any] | None = None

    def checked(self, response: Any) -> Any:
        """Check the model's response; the request to send the model again, or None."""
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        history = [*self.history, *self.earlier] if self.earlier else self.history
        update = turn_verdict(self.session, self.dialogue, history, response.result)
        self.response, self.update = response, update
        if update is None or update.get("jump_to") != "model" or self.request.tools:
            return None
        # An agent without tools has no tool node, and its model node's edge leads to the
        # end only (jump_to is not read there): the refused answer is asked for again here.
        self.earlier.extend([*response.result, *update["messages"]])
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
        update = self.update
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


__all__ = ["Dialogue", "ModelTurn", "record_calls_run_elsewhere", "text_of", "turn_verdict"]
