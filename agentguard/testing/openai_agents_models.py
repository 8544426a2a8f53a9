"""A scripted OpenAI Agents SDK model (``agents.Model``): predetermined replies, no network.

Each step of the script is one model response:

* a :class:`ScriptedCall` or a list of them: function calls (a list is a parallel batch);
  a handoff is a call too, to the SDK's ``transfer_to_<agent name>`` tool;
* a string: the final text answer;
* a :class:`Reaction`: a function of the last tool output the model saw (a result or a
  guard's refusal) returning one of the above (``if_observed``).

Give each agent its own model; a handoff continues with the next agent's script. Only
``Runner.run`` / ``Runner.run_sync`` are scripted: ``stream_response`` raises.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Union

from agentguard.errors import AgentGuardError, MissingExtraError

# re-exported, so that one import gives a model and the words of its script
from agentguard.testing import ScriptExhaustedError, call, call_with_id, if_observed
from agentguard.testing.script import Reaction, ScriptedCall, ScriptPlayer

try:
    from agents import Model, ModelResponse, Usage
    from agents.testing import assistant_message, function_call
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

Turn = Union[ScriptedCall, Sequence[ScriptedCall], str]  # noqa: UP007 - runtime alias on 3.10
Step = Union[Turn, Reaction]  # noqa: UP007 - runtime alias on 3.10

_CALL_IDS = itertools.count(1)  # unique across models, so a handoff never reuses an id


class StreamingNotScriptedError(AgentGuardError, NotImplementedError):
    """``Runner.run_streamed`` asked a scripted model to stream."""


class ScriptedAgentsModel(Model):
    """Replays ``script`` one step per ``get_response`` call."""

    def __init__(self, script: Sequence[Step]) -> None:
        self.player: ScriptPlayer[Turn] = ScriptPlayer(script, ids=_CALL_IDS)
        self.seen_tools: list[list[str]] = []
        """The tool names offered to the model at each step."""

    @property
    def observations(self) -> list[str]:
        """The last tool output seen before each step, in order ("" when none)."""
        return self.player.observations

    @property
    def remaining(self) -> int:
        return len(self.player.script) - self.player.position

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        del system_instructions, model_settings, output_schema, tracing
        del previous_response_id, conversation_id, prompt
        turn = self.player.next_turn(_last_output(input))
        self.seen_tools.append(
            [getattr(t, "name", "") for t in tools] + [h.tool_name for h in handoffs]
        )
        return ModelResponse(output=self._output(turn), usage=Usage(), response_id=None)

    def _output(self, turn: Turn) -> list[Any]:
        if isinstance(turn, str):
            return [assistant_message(turn)]
        return [function_call(c.name, c.args, call_id=i) for i, c in self.player.with_ids(turn)]

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        del args, kwargs
        raise StreamingNotScriptedError(
            "ScriptedAgentsModel scripts Runner.run and Runner.run_sync; it does not stream"
        )


def _last_output(items: str | list[Any]) -> str:
    """The text of the last ``function_call_output`` item (a tool result or a refusal)."""
    if isinstance(items, str):
        return ""
    for item in reversed(items):
        raw = item if isinstance(item, dict) else getattr(item, "model_dump", dict)()
        if raw.get("type") == "function_call_output":
            output = raw.get("output")
            return output if isinstance(output, str) else json.dumps(output, default=str)
    return ""


__all__ = [
    "Reaction",
    "ScriptExhaustedError",
    "ScriptedAgentsModel",
    "ScriptedCall",
    "StreamingNotScriptedError",
    "call",
    "call_with_id",
    "if_observed",
]
