"""A scripted LangChain chat model with ``bind_tools``: predetermined replies, no network.

Each step of the script is one of:

* a :class:`ScriptedCall` or a list of them: an ``AIMessage`` with those ``tool_calls``;
* a string: a plain ``AIMessage`` (the agent's final answer);
* an ``AIMessage``, used as is;
* a :class:`Reaction`: a function of the last message text the model saw (a tool result
  or a guard's refusal) returning one of the above (``if_observed``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, Union

from pydantic import PrivateAttr

from agentguard.errors import MissingExtraError
from agentguard.testing.script import (
    Reaction,
    ScriptedCall,
    ScriptExhaustedError,
    call,
    call_with_id,
    if_observed,
)

try:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


Turn = Union[ScriptedCall, Sequence[ScriptedCall], str, AIMessage]  # noqa: UP007 - runtime alias on 3.10


Step = Union[Turn, Reaction]  # noqa: UP007 - runtime alias on 3.10


class ScriptedChatModel(BaseChatModel):
    """Replays ``script`` one step per model call; ``bind_tools`` returns the model itself."""

    _script: list[Step] = PrivateAttr(default_factory=list)
    _position: int = PrivateAttr(default=0)
    _observations: list[str] = PrivateAttr(default_factory=list)
    _ids: Iterator[int] = PrivateAttr(default_factory=lambda: itertools.count(1))

    def __init__(self, script: Sequence[Step], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._script = list(script)

    @property
    def observations(self) -> list[str]:
        """What the model saw before each turn (tool results, refusals), in order."""
        return list(self._observations)

    @property
    def position(self) -> int:
        """How many steps of the script were played."""
        return self._position

    @property
    def _llm_type(self) -> str:
        return "agentguard-scripted"

    def bind_tools(
        self,
        tools: Sequence[Any],  # noqa: ARG002 - LangChain's signature
        **kwargs: Any,  # noqa: ARG002
    ) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002 - LangChain's signature
        run_manager: Any = None,  # noqa: ARG002
        **kwargs: Any,  # noqa: ARG002
    ) -> ChatResult:
        if self._position >= len(self._script):
            raise ScriptExhaustedError(
                f"the script has {len(self._script)} steps and the agent asked for another"
            )
        step = self._script[self._position]
        self._position += 1
        seen = _last_text(messages)
        self._observations.append(seen)
        turn = step.choose(seen) if isinstance(step, Reaction) else step
        return ChatResult(generations=[ChatGeneration(message=self._message(turn))])

    def _message(self, turn: Turn) -> AIMessage:
        if isinstance(turn, AIMessage):
            return turn
        if isinstance(turn, str):
            return AIMessage(content=turn)
        calls = [turn] if isinstance(turn, ScriptedCall) else list(turn)
        tool_calls = [
            {
                "name": c.name,
                "args": dict(c.args),
                "id": c.call_id if c.call_id is not None else f"call_{next(self._ids)}",
            }
            for c in calls
        ]
        return AIMessage(content="", tool_calls=tool_calls)


def _last_text(messages: Sequence[BaseMessage]) -> str:
    """Everything after the model's last turn (all results of a parallel batch), or the task."""
    tail: list[BaseMessage] = []
    for message in reversed(messages):
        if message.type == "ai":
            break
        if message.type != "system":
            tail.append(message)
    return "\n".join(_content(m) for m in reversed(tail))


def _content(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))


__all__ = [
    "Reaction",
    "ScriptExhaustedError",
    "ScriptedCall",
    "ScriptedChatModel",
    "call",
    "call_with_id",
    "if_observed",
]
