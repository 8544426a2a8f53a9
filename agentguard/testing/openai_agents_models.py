"""A scripted OpenAI Agents SDK model (``agents.Model``): predetermined replies, no network.

Each step of the script is one model response:

* a :class:`ScriptedCall` or a list of them: function calls (a list is a parallel batch);
  a handoff is a call too, to the SDK's ``transfer_to_<agent name>`` tool;
* a string: the final text answer;
* a :class:`Reaction`: a function of the last tool output the model saw (a result or a
  guard's refusal) returning one of the above (``if_observed``).

Give each agent its own model; a handoff continues with the next agent's script.
``Runner.run``, ``Runner.run_sync`` and ``Runner.run_streamed`` are scripted alike: a
streamed step is one ``response.completed`` event carrying the step's whole output.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Union

from agentguard.errors import MissingExtraError

# re-exported, so that one import gives a model and the words of its script
from agentguard.testing import ScriptExhaustedError, call, call_with_id, if_observed
from agentguard.testing.script import Reaction, ScriptedCall, ScriptPlayer

try:
    from agents import Model, ModelResponse, Usage
    from agents.testing import assistant_message, function_call
    from openai.types.responses import Response, ResponseCompletedEvent
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

Turn = Union[ScriptedCall, Sequence[ScriptedCall], str]  # noqa: UP007 - runtime alias on 3.10
Step = Union[Turn, Reaction]  # noqa: UP007 - runtime alias on 3.10

_CALL_IDS = itertools.count(1)  # unique across models, so a handoff never reuses an id


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

    def _step(self, items: str | list[Any], tools: list[Any], handoffs: list[Any]) -> list[Any]:
        """The next step's output items (the offered tools noted)."""
        turn = self.player.next_turn(_last_output(items))
        self.seen_tools.append(
            [getattr(t, "name", "") for t in tools] + [h.tool_name for h in handoffs]
        )
        return self._output(turn)

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
        output = self._step(input, tools, handoffs)
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def _output(self, turn: Turn) -> list[Any]:
        if isinstance(turn, str):
            return [assistant_message(turn)]
        return [function_call(c.name, c.args, call_id=i) for i, c in self.player.with_ids(turn)]

    async def stream_response(
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
    ) -> AsyncIterator[Any]:
        """The next step as a stream: one ``response.completed`` event with its output."""
        del system_instructions, model_settings, output_schema, tracing
        del previous_response_id, conversation_id, prompt
        response = Response(
            id="scripted-response",
            created_at=0,
            model="scripted-model",
            object="response",
            output=self._step(input, tools, handoffs),
            tool_choice="none",
            tools=[],
            top_p=None,
            parallel_tool_calls=True,
            status="completed",
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=0
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
    "call",
    "call_with_id",
    "if_observed",
]
