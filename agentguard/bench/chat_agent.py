"""A chat model as a benchmark agent: the evaluation side of the executed GRPO rollout.

A model fine-tuned with :mod:`agentguard.bench.environment` learned to act in TRL's tool
loop: the prompt rendered by its chat template with the instance's tools as typed
methods, its replies parsed by TRL's ``parse_response``, each tool result fed back as a
``tool`` message holding the environment's JSON. Evaluated through the runner (with the
firewall off or on), it must see the same: :class:`ChatModelAgent` renders and parses
exactly so, one greedy generation per turn, so a held-out score measures the policy that
was trained and not a change of prompt format.

Under the firewall a blocked call gets the firewall's warning in place of its result, and
the calls the model wrote after it in the same turn are dropped (the turn is cut after the
blocked call): the model reads the warning before it goes on. A blocked final answer gets
the warning as a user turn. A reply without a tool call is the final answer. Needs
``agentguard[train]`` (transformers, TRL).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentguard.bench.agent import Agent, AgentFactory, Feedback, FinalAnswer, ToolCall
from agentguard.bench.environment import environment_class
from agentguard.bench.instance import Instance
from agentguard.errors import MissingExtraError


class ChatModelAgent:
    """``act(feedback)`` for a transformers causal LM and its tokenizer (see the module)."""

    def __init__(
        self, model: Any, tokenizer: Any, instance: Instance, *, max_new_tokens: int = 512
    ) -> None:
        try:
            from transformers import GenerationConfig
            from trl.chat_template_utils import add_response_schema, parse_response
        except ImportError as exc:
            raise MissingExtraError("train", exc.name or "trl") from exc
        env = environment_class(instance.tools, instance.aliases)()
        # GRPOTrainer lists an environment's methods by name (inspect.getmembers): so here
        self.tools = [getattr(env, name) for name in sorted(env.tool_names)]
        self.model, self.tokenizer, self._parse = model, tokenizer, parse_response
        if getattr(tokenizer, "response_template", None) is None and (
            getattr(tokenizer, "response_schema", None) is None
        ):
            add_response_schema(tokenizer)  # what GRPOTrainer does; ValueError if unknown
        self.config = GenerationConfig(  # type: ignore[no-untyped-call]  # transformers' own
            max_new_tokens=max_new_tokens,
            do_sample=False,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": instance.prompt}]
        self.queue: list[ToolCall] = []
        self.last: ToolCall | FinalAnswer | None = None

    def act(self, feedback: Feedback | None) -> ToolCall | FinalAnswer:
        if feedback is not None:
            self._tell(feedback)
        if not self.queue:
            self._reply()
        self.last = self.queue.pop(0) if self.queue else FinalAnswer(self.messages[-1]["content"])
        return self.last

    def _tell(self, feedback: Feedback) -> None:
        if not isinstance(self.last, ToolCall):  # a blocked answer: the warning as a user turn
            self.messages.append({"role": "user", "content": feedback.message})
            return
        content = json.dumps(feedback.result)  # BenchEnvironment's reply, error or result
        if feedback.kind == "blocked":
            content = feedback.message
            start = len(self.messages)  # the turn's tool replies follow its assistant message
            while self.messages[start - 1]["role"] != "assistant":
                start -= 1
            turn = self.messages[start - 1]
            turn["tool_calls"] = turn["tool_calls"][: len(self.messages) - start + 1]
            self.queue = []
        self.messages.append({"role": "tool", "name": self.last.name, "content": content})

    def _reply(self) -> None:
        import torch

        prompt = self.tokenizer.apply_chat_template(
            self.messages, tools=self.tools, add_generation_prompt=True, tokenize=True
        )
        ids = list(prompt["input_ids"] if isinstance(prompt, Mapping) else prompt)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is not None and len(ids) + self.config.max_new_tokens > limit:
            self.messages.append({"role": "assistant", "content": ""})  # out of context: answer
            return
        with torch.no_grad():
            device = getattr(self.model, "device", None)  # where the model was put
            tensor = torch.tensor([ids], device=device)
            out = self.model.generate(input_ids=tensor, generation_config=self.config)
        reply = self._parse(self.tokenizer, out[0, len(ids) :].tolist(), prefix=ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content") or ""}
        calls = reply.get("tool_calls") or []
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)
        for call in calls:
            function = call.get("function", {})
            args = function.get("arguments")
            # arguments that are no object still run, and fail, as a call without any
            shown = dict(args) if isinstance(args, Mapping) else {}
            self.queue.append(ToolCall(str(function.get("name")), shown))


def chat_model_factory(model: Any, tokenizer: Any, *, max_new_tokens: int = 512) -> AgentFactory:
    """The runner's ``(instance) -> agent`` for one loaded model and tokenizer."""

    def make(instance: Instance) -> Agent:
        return ChatModelAgent(model, tokenizer, instance, max_new_tokens=max_new_tokens)

    return make


__all__ = ["ChatModelAgent", "chat_model_factory"]
