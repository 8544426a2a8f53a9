"""The scripted models that drive agents in tests, examples and the demo."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from smolagents.models import ChatMessage, MessageRole

from agentguard.testing import langchain_models as lc
from agentguard.testing import smolagents_models as sm


class TestSmolagentsScriptedModel:
    def test_tool_call_steps_become_tool_calls(self) -> None:
        """A list of calls is one assistant message with that many tool calls."""
        model = sm.ScriptedModel([[sm.call("a", x=1), sm.call("b")]])
        message = model.generate([])
        assert [c.function.name for c in message.tool_calls] == ["a", "b"]
        assert message.tool_calls[0].function.arguments == {"x": 1}
        assert message.tool_calls[0].id != message.tool_calls[1].id

    def test_code_steps_are_wrapped_in_code_tags(self) -> None:
        """A string step is code, wrapped in <code> tags for a CodeAgent."""
        message = sm.ScriptedModel(["print(1)"]).generate([])
        assert "<code>\nprint(1)\n</code>" in message.content

    def test_reaction_sees_the_last_observation(self) -> None:
        """if_observed picks its branch from the newest non-assistant message."""
        model = sm.ScriptedModel([sm.if_observed("blocked", "x = 1", "x = 2")] * 2)
        seen = [ChatMessage(role=MessageRole.TOOL_RESPONSE, content="call was BLOCKED")]
        assert "x = 1" in model.generate(seen).content
        other = [ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "ok"}])]
        assert "x = 2" in model.generate(other).content
        assert model.observations == ["call was BLOCKED", "ok"]

    def test_running_out_of_script_is_an_error(self) -> None:
        """Asking for more steps than scripted raises ScriptExhaustedError."""
        with pytest.raises(sm.ScriptExhaustedError):
            sm.ScriptedModel([]).generate([])


class TestLangchainScriptedModel:
    def test_bind_tools_returns_the_model(self) -> None:
        """bind_tools is accepted and changes nothing."""
        model = lc.ScriptedChatModel(["hi"])
        assert model.bind_tools([]) is model

    def test_steps_become_ai_messages(self) -> None:
        """Calls become tool_calls with unique ids; text becomes a plain answer."""
        model = lc.ScriptedChatModel([[lc.call("a", x=1), lc.call("b")], "done"])
        first = model.invoke([HumanMessage("go")])
        assert [c["name"] for c in first.tool_calls] == ["a", "b"]
        assert first.tool_calls[0]["id"] != first.tool_calls[1]["id"]
        assert model.invoke([HumanMessage("go")]).content == "done"
        assert model.position == 2

    def test_reaction_sees_every_result_since_the_last_turn(self) -> None:
        """A reaction reads all tool messages after the model's last turn."""
        model = lc.ScriptedChatModel([lc.if_observed("BLOCKED", "saw it", "missed it")])
        history = [
            HumanMessage("task"),
            AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "1"}]),
            ToolMessage("BLOCKED by agentguard", tool_call_id="1"),
            ToolMessage("fine", tool_call_id="2"),
        ]
        assert model.invoke(history).content == "saw it"
        assert model.observations == ["BLOCKED by agentguard\nfine"]

    def test_running_out_of_script_is_an_error(self) -> None:
        """Asking for more turns than scripted raises ScriptExhaustedError."""
        with pytest.raises(lc.ScriptExhaustedError):
            lc.ScriptedChatModel([]).invoke([HumanMessage("x")])


class TestOpenAIAgentsScriptedModel:
    """The scripted ``agents.Model`` behind the OpenAI Agents SDK tests and example."""

    @staticmethod
    def respond(model: Any, items: Any = "hi") -> Any:
        import asyncio

        return asyncio.run(
            model.get_response(
                None,
                items,
                None,
                [],
                None,
                [],
                None,
                previous_response_id=None,
                conversation_id=None,
                prompt=None,
            )
        )

    def test_calls_become_function_calls_with_unique_ids(self) -> None:
        """A list of calls is one response with that many function calls, ids never reused."""
        from agentguard.testing import openai_agents_models as oa

        model = oa.ScriptedAgentsModel([[oa.call("a", x=1), oa.call("b")], [oa.call("a")]])
        first = self.respond(model).output
        second = self.respond(model).output
        assert [c.name for c in first] == ["a", "b"] and first[0].arguments == '{"x":1}'
        ids = [c.call_id for c in (*first, *second)]
        assert len(set(ids)) == 3

    def test_text_is_the_final_answer_and_reactions_see_the_last_output(self) -> None:
        """A string is an assistant message; if_observed reads the last function output."""
        from agentguard.testing import openai_agents_models as oa

        model = oa.ScriptedAgentsModel([oa.if_observed("blocked", "sorry", "done")] * 2)
        refused = [{"type": "function_call_output", "call_id": "c", "output": "BLOCKED: no"}]
        assert self.respond(model, refused).output[0].content[0].text == "sorry"
        assert self.respond(model, "plain input").output[0].content[0].text == "done"
        assert model.observations == ["BLOCKED: no", ""]

    def test_running_out_is_an_error_and_a_streamed_step_is_one_completed_event(self) -> None:
        """More steps than scripted raises ScriptExhaustedError; a streamed step is one
        ``response.completed`` event carrying the step's output."""
        import asyncio

        from agentguard.testing import openai_agents_models as oa

        model = oa.ScriptedAgentsModel([oa.call("a", x=1)])
        stream = model.stream_response(
            None,
            "hi",
            None,
            [],
            None,
            [],
            None,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )

        async def events() -> list[Any]:
            return [event async for event in stream]

        (event,) = asyncio.run(events())
        assert event.type == "response.completed"
        assert [item.name for item in event.response.output] == ["a"]
        with pytest.raises(oa.ScriptExhaustedError):
            self.respond(model)
