"""A scripted smolagents ``Model``: predetermined tool calls or code, no network.

Each step of the script is one of:

* a :class:`ScriptedCall` or a list of them: one model turn of (parallel) tool calls,
  for a ``ToolCallingAgent``;
* a string: Python code for a ``CodeAgent`` (wrapped in ``<code>`` tags if it has none);
* a :class:`Reaction`: a function of the last observation the model saw that returns one
  of the above, so a script can react to what the guard said (``if_observed``).

Used by agentguard's tests, examples and demo; useful to test your own specs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

from agentguard.errors import MissingExtraError

# re-exported, so that one import gives a model and the words of its script
from agentguard.testing import ScriptExhaustedError, call, call_with_id, if_observed
from agentguard.testing.script import Reaction, ScriptedCall, ScriptPlayer, content_text

try:
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("smolagents", "smolagents") from exc


Turn = Union[ScriptedCall, Sequence[ScriptedCall], str]  # noqa: UP007 - runtime alias on 3.10


Step = Union[Turn, Reaction]  # noqa: UP007 - runtime alias on 3.10


class ScriptedModel(Model):  # type: ignore[misc]  # smolagents ships no type information
    """Replays ``script`` one step per ``generate`` call; deterministic and offline."""

    def __init__(self, script: Sequence[Step], *, model_id: str = "scripted") -> None:
        super().__init__(model_id=model_id)
        self.player: ScriptPlayer[Turn] = ScriptPlayer(script)
        self.offered: list[tuple[str, ...] | None] = []  # tools_to_call_from, per call
        self.system_prompts: list[str] = []  # the system message, per call

    @property
    def script(self) -> list[Step]:
        """The steps; reassign to give a running agent's model new ones."""
        return self.player.script

    @script.setter
    def script(self, steps: Sequence[Step]) -> None:
        self.player.script = list(steps)

    @property
    def position(self) -> int:
        """How many steps of the script were played."""
        return self.player.position

    @property
    def observations(self) -> list[str]:
        """What the model saw before each turn (tool results, refusals), in order."""
        return self.player.observations

    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,  # noqa: ARG002 - smolagents' signature
        response_format: dict[str, str] | None = None,  # noqa: ARG002
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,  # noqa: ARG002
    ) -> ChatMessage:
        names = None if tools_to_call_from is None else tuple(t.name for t in tools_to_call_from)
        self.offered.append(names)
        system = [m for m in messages if _role(m) == "system"]
        self.system_prompts.append(content_text(_field(system[0], "content")) if system else "")
        return self._message(self.player.next_turn(last_observation(messages)))

    def _message(self, turn: Turn) -> ChatMessage:
        if isinstance(turn, str):
            code = turn if "<code>" in turn else f"Thought: next step.\n<code>\n{turn}\n</code>"
            return ChatMessage(role=MessageRole.ASSISTANT, content=code)
        tool_calls = [
            ChatMessageToolCall(
                id=call_id,
                type="function",
                function=ChatMessageToolCallFunction(name=c.name, arguments=dict(c.args)),
            )
            for call_id, c in self.player.with_ids(turn)
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=tool_calls)


def last_observation(messages: Sequence[Any]) -> str:
    """The text of the newest non-assistant, non-system message (what the model last saw)."""
    for message in reversed(messages):
        role = _field(message, "role")
        role_value = getattr(role, "value", role)
        if role_value in ("assistant", "system"):
            continue
        return content_text(_field(message, "content"))
    return ""


def _role(message: Any) -> Any:
    role = _field(message, "role")
    return getattr(role, "value", role)


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


__all__ = [
    "Reaction",
    "ScriptExhaustedError",
    "ScriptedCall",
    "ScriptedModel",
    "call",
    "call_with_id",
    "if_observed",
    "last_observation",
]
