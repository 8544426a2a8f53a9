"""``ChatModelAgent``: a chat model in the runner, prompted and parsed as in GRPO rollouts.

The model is a stub that writes scripted replies (so each turn is known); the tokenizer is
the tiny one trained on the benchmark's text with TRL's Qwen3 chat template.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from agentguard.bench.agent import Feedback, FinalAnswer, ToolCall
from agentguard.bench.runner import run_instance
from agentguard.bench.simplified import generate_simplified, random_vocab
from agentguard.bench.simplified.templates import SIMPLIFIED_TEMPLATES
from agentguard.errors import MissingExtraError

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from agentguard.bench.chat_agent import ChatModelAgent, chat_model_factory  # noqa: E402
from agentguard.bench.tiny import train_tokenizer  # noqa: E402

LOOP = generate_simplified("loop_termination", 3)


def call(name: str, **args: Any) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


class Scripted:
    """A causal LM stub: ``generate`` appends the next scripted reply to the prompt."""

    def __init__(self, tokenizer: Any, replies: list[str], positions: int = 4096) -> None:
        self.tokenizer, self.replies = tokenizer, list(replies)
        self.config = type("Config", (), {"max_position_embeddings": positions})()
        self.prompts: list[str] = []

    def generate(self, *, input_ids: Any, generation_config: Any) -> Any:
        assert generation_config.do_sample is False
        self.prompts.append(self.tokenizer.decode(input_ids[0]))
        reply = self.tokenizer(self.replies.pop(0) + "<|im_end|>")["input_ids"]
        return torch.cat([input_ids, torch.tensor([reply])], dim=1)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return train_tokenizer([LOOP, generate_simplified("branch_selection", 3)])


def test_tool_calls_then_answer(tokenizer: Any) -> None:
    """Two calls in one reply come one by one; their results go back as tool messages."""
    model = Scripted(tokenizer, [call("tool_a", i=1) + "\n" + call("tool_a", i=2), "ANSWER: 9"])
    agent = ChatModelAgent(model, tokenizer, LOOP, max_new_tokens=8)
    assert agent.act(None) == ToolCall("tool_a", {"i": 1})
    assert agent.act(Feedback("result", {"result": 4})) == ToolCall("tool_a", {"i": 2})
    assert agent.act(Feedback("result", {"result": 5})) == FinalAnswer("ANSWER: 9")
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert agent.messages[3]["content"] == '{"result": 5}'
    # the second prompt shows the tool results, as TRL's tool loop feeds them back
    assert '{"result": 4}' in model.prompts[1]
    assert '{"result": 5}' in model.prompts[1]
    assert "<tools>" in model.prompts[0]


def test_a_blocked_call_cuts_the_turn(tokenizer: Any) -> None:
    """After a block the warning replaces the result and the turn's later calls are dropped."""
    model = Scripted(tokenizer, [call("tool_a", i=7) + "\n" + call("tool_a", i=1), "ANSWER: 1"])
    agent = ChatModelAgent(model, tokenizer, LOOP)
    assert agent.act(None) == ToolCall("tool_a", {"i": 7})
    assert agent.act(Feedback("blocked", message="call tool_a(i=1) first")) == FinalAnswer(
        "ANSWER: 1"
    )
    assert len(agent.messages[1]["tool_calls"]) == 1
    assert agent.messages[2] == {
        "role": "tool",
        "name": "tool_a",
        "content": "call tool_a(i=1) first",
    }
    assert "call tool_a(i=1) first" in model.prompts[1]


def test_a_blocked_answer_is_told_as_a_user_turn(tokenizer: Any) -> None:
    """A final answer the firewall refuses comes back as a user message; the model goes on."""
    model = Scripted(tokenizer, ["ANSWER: 3", call("tool_a", i=1)])
    agent = ChatModelAgent(model, tokenizer, LOOP)
    assert agent.act(None) == FinalAnswer("ANSWER: 3")
    assert agent.act(Feedback("blocked", message="not yet")) == ToolCall("tool_a", {"i": 1})
    assert agent.messages[2] == {"role": "user", "content": "not yet"}


def test_out_of_context_answers_empty(tokenizer: Any) -> None:
    """A prompt that leaves no room for ``max_new_tokens`` ends the run with an empty answer."""
    agent = ChatModelAgent(Scripted(tokenizer, [], positions=64), tokenizer, LOOP)
    assert agent.act(None) == FinalAnswer("")


def test_alias_tools_listed_by_name(tokenizer: Any) -> None:
    """The prompt lists an instance's tools by name, as GRPOTrainer lists the environment's."""
    vocab = random_vocab(5, SIMPLIFIED_TEMPLATES["three_call_branch_bridge"].tools)
    inst = generate_simplified("three_call_branch_bridge", 5, vocab=vocab)
    model = Scripted(tokenizer, ["ANSWER: 0"])
    ChatModelAgent(model, tokenizer, inst).act(None)
    at = [model.prompts[0].index(f'"name": "{t}"') for t in inst.tools]
    assert [t for _, t in sorted(zip(at, inst.tools, strict=True))] == sorted(inst.tools)


def test_runs_in_the_runner_under_the_firewall(tokenizer: Any) -> None:
    """Through ``run_instance``: the calls the model wrote run on the instance's tools."""
    replies = [call("tool_a", i=1), call("tool_a", i=2), "ANSWER: 2"] + ["ANSWER: 2"] * 20
    model = Scripted(tokenizer, replies)
    result = run_instance(LOOP, "block-and-warn", chat_model_factory(model, tokenizer))
    assert [(c.name, dict(c.args)) for c in result.trace] == [
        ("tool_a", {"i": 1}),
        ("tool_a", {"i": 2}),
    ]
    assert [c.result for c in result.trace] == [g.result for g in LOOP.gold_trace[:2]]
    assert result.events  # the early answer was blocked before it went through


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch, tokenizer: Any) -> None:
    """Without TRL the agent says to install agentguard[train]."""
    monkeypatch.setitem(sys.modules, "trl.chat_template_utils", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'agentguard\[train\]'"):
        ChatModelAgent(object(), tokenizer, LOOP)
