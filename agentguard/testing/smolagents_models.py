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

import itertools
from collections.abc import Sequence
from typing import Any, Union

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
        self.script = list(script)
        self.position = 0
        self.observations: list[str] = []
        self._ids = itertools.count(1)

    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,  # noqa: ARG002 - smolagents' signature
        response_format: dict[str, str] | None = None,  # noqa: ARG002
        tools_to_call_from: list[Any] | None = None,  # noqa: ARG002
        **kwargs: Any,  # noqa: ARG002
    ) -> ChatMessage:
        if self.position >= len(self.script):
            raise ScriptExhaustedError(
                f"the script has {len(self.script)} steps and the agent asked for another"
            )
        step = self.script[self.position]
        self.position += 1
        seen = last_observation(messages)
        self.observations.append(seen)
        turn = step.choose(seen) if isinstance(step, Reaction) else step
        return self._message(turn)

    def _message(self, turn: Turn) -> ChatMessage:
        if isinstance(turn, str):
            code = turn if "<code>" in turn else f"Thought: next step.\n<code>\n{turn}\n</code>"
            return ChatMessage(role=MessageRole.ASSISTANT, content=code)
        calls = [turn] if isinstance(turn, ScriptedCall) else list(turn)
        tool_calls = [
            ChatMessageToolCall(
                id=c.call_id if c.call_id is not None else f"call_{next(self._ids)}",
                type="function",
                function=ChatMessageToolCallFunction(name=c.name, arguments=dict(c.args)),
            )
            for c in calls
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=tool_calls)


def last_observation(messages: Sequence[Any]) -> str:
    """The text of the newest non-assistant, non-system message (what the model last saw)."""
    for message in reversed(messages):
        role = _field(message, "role")
        role_value = getattr(role, "value", role)
        if role_value in ("assistant", "system"):
            continue
        return _text(_field(message, "content"))
    return ""


def _field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


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
