"""A scripted LangChain chat model with ``bind_tools``: predetermined replies, no network.

Each step of the script is one of:

* a :class:`ScriptedCall` or a list of them: an ``AIMessage`` with those ``tool_calls``;
* a string: a plain ``AIMessage`` (the agent's final answer);
* an ``AIMessage``, used as is;
* a :class:`Reaction`: a function of the last message text the model saw (a tool result
  or a guard's refusal) returning one of the above (``if_observed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

from pydantic import PrivateAttr

from agentguard.errors import MissingExtraError

# re-exported, so that one import gives a model and the words of its script
from agentguard.testing import ScriptExhaustedError, call, call_with_id, if_observed
from agentguard.testing.script import Reaction, ScriptedCall, ScriptPlayer, content_text

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

    _player: ScriptPlayer[Turn] = PrivateAttr()
    _bound: list[tuple[str, ...]] = PrivateAttr(default_factory=list)
    _systems: list[str] = PrivateAttr(default_factory=list)

    def __init__(self, script: Sequence[Step], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._player = ScriptPlayer(script)

    @property
    def bound_tools(self) -> list[tuple[str, ...]]:
        """The names of the tools bound for each model call, in order (what the model
        was offered)."""
        return list(self._bound)

    @property
    def system_prompts(self) -> list[str]:
        """The system message of each model call ("" without one), in order."""
        return list(self._systems)

    @property
    def observations(self) -> list[str]:
        """What the model saw before each turn (tool results, refusals), in order."""
        return list(self._player.observations)

    @property
    def position(self) -> int:
        """How many steps of the script were played."""
        return self._player.position

    @property
    def _llm_type(self) -> str:
        return "agentguard-scripted"

    def bind_tools(
        self,
        tools: Sequence[Any],
        **kwargs: Any,  # noqa: ARG002 - LangChain's signature
    ) -> ScriptedChatModel:
        self._bound.append(tuple(_name(t) for t in tools))
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,  # noqa: ARG002 - LangChain's signature
        run_manager: Any = None,  # noqa: ARG002
        **kwargs: Any,  # noqa: ARG002
    ) -> ChatResult:
        system = [content_text(m.content) for m in messages if m.type == "system"]
        self._systems.append("\n".join(system))
        turn = self._player.next_turn(_last_text(messages))
        return ChatResult(generations=[ChatGeneration(message=self._message(turn))])

    def _message(self, turn: Turn) -> AIMessage:
        if isinstance(turn, AIMessage):
            return turn
        if isinstance(turn, str):
            return AIMessage(content=turn)
        tool_calls = [
            {"name": c.name, "args": dict(c.args), "id": call_id}
            for call_id, c in self._player.with_ids(turn)
        ]
        return AIMessage(content="", tool_calls=tool_calls)


def _name(tool: Any) -> str:
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    inner = tool.get("function", tool) if isinstance(tool, dict) else {}
    return str(inner.get("name", "")) if isinstance(inner, dict) else ""


def _last_text(messages: Sequence[BaseMessage]) -> str:
    """Everything after the model's last turn (all results of a parallel batch), or the task."""
    tail: list[BaseMessage] = []
    for message in reversed(messages):
        if message.type == "ai":
            break
        if message.type != "system":
            tail.append(message)
    return "\n".join(content_text(m.content) for m in reversed(tail))


__all__ = [
    "Reaction",
    "ScriptExhaustedError",
    "ScriptedCall",
    "ScriptedChatModel",
    "call",
    "call_with_id",
    "if_observed",
]
