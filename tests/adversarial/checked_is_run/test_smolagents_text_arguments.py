"""smolagents ToolCallingAgent: a model's tool call whose arguments are not a JSON object
(text that is not JSON, a JSON list) runs with that value as the tool's one positional
argument. The turn's batch check judges the call the tool's gate will propose, the value
named after the first parameter: not a phantom call with no arguments, approved beside
the real one, counted against it, and waited for by the siblings that relied on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

from agentguard.guard import guard
from agentguard.language import parse_spec
from tests.adversarial._smolagents_support import RAN, keep, log_lines, ran


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def verify_identity(customer_id: str) -> str:
    """Verify a customer.

    Args:
        customer_id: The customer.
    """
    ran("verify_identity", customer_id=customer_id)
    return "verified"


@tool  # type: ignore[untyped-decorator]
def issue_refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order.
    """
    ran("issue_refund", order_id=order_id)
    return "refunded"


class RawArgumentsModel(Model):  # type: ignore[misc]  # smolagents ships no type information
    """Replays turns of (tool, arguments) with the arguments exactly as given: text stays
    the model's raw text, as a provider hands it over."""

    def __init__(self, turns: list[list[tuple[str, Any]]]) -> None:
        super().__init__(model_id="raw")
        self.turns = list(turns)

    def generate(self, messages: Any, **kwargs: Any) -> ChatMessage:
        turn = self.turns.pop(0)
        calls = [
            ChatMessageToolCall(
                id=f"call{i}",
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            )
            for i, (name, arguments) in enumerate(turn)
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=calls)


SPEC = parse_spec(
    """
spec text_arguments
constraint one_refund severity HARD_STOP := CalledN(issue_refund, 1, <=)
constraint identity_first severity SOFT_BLOCK(9) := G(issue_refund -> O verify_identity)
constraint not_c9 severity SOFT_BLOCK(9) := G !verify_identity(customer_id = "C9")
"""
)

ANSWER: list[tuple[str, Any]] = [("final_answer", {"answer": "done"})]


def _agent(turns: list[list[tuple[str, Any]]], tmp_path: Path, tools: list[Any]) -> Any:
    agent = ToolCallingAgent(
        tools=tools, model=RawArgumentsModel(turns), verbosity_level=-1, max_steps=4
    )
    # a phantom sibling would be waited for this long before the refund is judged alone
    return guard(agent, SPEC, log_path=tmp_path / "decisions.jsonl", start_timeout=10.0)


def _decided(agent: Any) -> list[tuple[str, Any, Any]]:
    return [
        (line["tool"], line["args"], line["action"])
        for line in log_lines(agent.agentguard)
        if line.get("event") == "agentguard.decision"
    ]


def _withdrawn(agent: Any) -> list[Any]:
    return [line for line in log_lines(agent.agentguard) if "withdrawn" in line["event"]]


def test_text_arguments_are_judged_as_the_one_argument_the_tool_gets(tmp_path: Path) -> None:
    agent = _agent([[("issue_refund", "A1")], ANSWER], tmp_path, [verify_identity, issue_refund])
    agent.run("refund A1")
    # the one refund was refused only for want of a verification, never as a second one
    assert RAN == []
    assert _decided(agent)[0] == ("issue_refund", {"order_id": "A1"}, "block")
    assert _withdrawn(agent) == []  # no call was approved that did not come


def test_a_refused_text_call_leaves_no_approval_its_siblings_wait_for(tmp_path: Path) -> None:
    turns = [[("verify_identity", "C9"), ("issue_refund", {"order_id": "A1"})], ANSWER]
    agent = _agent(turns, tmp_path, [verify_identity, issue_refund])
    agent.run("refund A1")
    assert RAN == []
    assert _decided(agent)[:2] == [
        ("verify_identity", {"customer_id": "C9"}, "block"),
        ("issue_refund", {"order_id": "A1"}, "block"),
    ]
    assert _withdrawn(agent) == []  # nothing approved for the refund to wait for


def test_text_then_a_verified_refund_runs_once(tmp_path: Path) -> None:
    turns = [[("verify_identity", "C1")], [("issue_refund", "A1")], ANSWER]
    agent = _agent(turns, tmp_path, [verify_identity, issue_refund])
    agent.run("refund A1")
    assert RAN == [("verify_identity", {"customer_id": "C1"}), ("issue_refund", {"order_id": "A1"})]
    assert [d[2] for d in _decided(agent)] == ["allow", "allow", "allow"]


def test_a_json_list_is_the_first_parameter(tmp_path: Path) -> None:
    agent = _agent([[("keep", '["a", "b"]')], ANSWER], tmp_path, [keep])
    agent.run("keep them")
    assert RAN == [("keep", {"items": ["a", "b"]})]
    assert _decided(agent)[0] == ("keep", {"items": ["a", "b"]}, "allow")


@pytest.mark.parametrize("empty", [None, "", 0, False, []])
def test_a_falsy_value_is_no_argument_at_all(tmp_path: Path, empty: Any) -> None:
    """smolagents runs ``tool(**(arguments or {}))``: the batch judges the same bare call
    (it judged ``verify_identity(customer_id=None)``, and the real call was refused
    beside that phantom, its sibling waiting for it)."""
    turns = [[("verify_identity", empty), ("issue_refund", {"order_id": "A1"})], ANSWER]
    agent = _agent(turns, tmp_path, [_verify_anyone(), issue_refund])
    agent.run("refund A1")
    assert RAN == [
        ("verify_identity", {"customer_id": "anyone"}),
        ("issue_refund", {"order_id": "A1"}),
    ]
    assert _withdrawn(agent) == []


def _verify_anyone() -> Any:
    def verify_identity(customer_id: str = "anyone") -> str:
        """Verify a customer.

        Args:
            customer_id: The customer.
        """
        ran("verify_identity", customer_id=customer_id)
        return "verified"

    return tool(verify_identity)
