"""A tiny causal LM and a tokenizer trained on the benchmark's own text, for CPU runs.

The GRPO path must run where no model can be downloaded (CI, this repository's tests) and
fast enough to train on two CPU cores. So the tokenizer is a byte-level BPE trained on the
benchmark's rendered conversations (prompts, tool schemas, gold tool calls and replies),
and the model is a two-layer Qwen3 decoder randomly initialised from a config. Neither can
solve the benchmark; they exist to show that the reward and the executed rollouts run
inside ``trl.GRPOTrainer`` and carry a learning signal (``benchmarks/train_tiny.py``).

The chat template is TRL's copy of Qwen3-Instruct-2507's: TRL knows how to parse its
``<tool_call>`` blocks (``add_response_schema``), so the trainer's own multi-turn tool
loop runs unchanged, as it would for a real Qwen model. Needs ``agentguard[train]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentguard.bench.environment import environment_class, gold_messages
from agentguard.bench.errors import BenchError
from agentguard.bench.instance import Instance
from agentguard.errors import MissingExtraError

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
"""Pad, turn start and turn end (the end of a turn is the end-of-sequence token)."""


def _chat_template() -> str:
    try:
        from trl.chat_template_utils import qwen3_instruct_2507_chat_template
    except ImportError as exc:
        raise MissingExtraError("train", "trl") from exc
    return str(qwen3_instruct_2507_chat_template)


def _bpe_tokenizer(texts: Iterable[str], vocab_size: int, template: str) -> Any:
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
        from transformers import PreTrainedTokenizerFast
    except ImportError as exc:
        raise MissingExtraError("train", "transformers") from exc
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]  # transformers' own
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    tokenizer.chat_template = template
    return tokenizer


def render_gold(tokenizer: Any, instance: Instance) -> str:
    """The instance's gold run as the text the model should produce, tools listed first."""
    env = environment_class(instance.tools, instance.aliases)()
    tools = [getattr(env, name) for name in env.tool_names]
    return str(tokenizer.apply_chat_template(gold_messages(instance), tools=tools, tokenize=False))


def train_tokenizer(instances: Sequence[Instance], *, vocab_size: int = 1024) -> Any:
    """A ``PreTrainedTokenizerFast`` whose BPE is trained on the instances' gold runs.

    Two passes: the first tokenizer (trained on the prompts and gold records alone) only
    renders the chat template; the second is trained on the rendered conversations, so the
    template's markup (``<tool_call>``, the tool schema) gets merges of its own.
    """
    template = _chat_template()
    raw = [i.prompt for i in instances] + [str(i.gold_records()) for i in instances]
    draft = _bpe_tokenizer(raw, 300, template)
    rendered = [render_gold(draft, i) for i in instances]
    return _bpe_tokenizer(rendered, vocab_size, template)


def tiny_model(
    tokenizer: Any,
    *,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    max_positions: int = 2048,
    seed: int = 0,
) -> Any:
    """A randomly initialised Qwen3 decoder sized for the tokenizer (float32, CPU)."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, Qwen3Config
    except ImportError as exc:
        raise MissingExtraError("train", "transformers") from exc
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=hidden_size // heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return AutoModelForCausalLM.from_config(  # type: ignore[no-untyped-call]  # transformers' own
        config, dtype=torch.float32
    )


def warm_start(
    model: Any,
    tokenizer: Any,
    instances: Sequence[Instance],
    *,
    steps: int,
    learning_rate: float = 3e-3,
) -> list[float]:
    """A supervised pass over the instances' rendered gold runs (one run per step, cycled).

    A randomly initialised model almost never writes a parsable ``<tool_call>``, so no tool
    would run and every reward would be the same: GRPO needs a policy that already acts.
    The loss covers what follows the prompt (the gold tool calls, their replies and the
    answer), not the prompt itself, which the policy never has to write. Returns the loss
    of each step.
    """
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError("train", "torch") from exc
    if not instances:
        raise BenchError("warm_start needs at least one instance")
    batches = []
    for instance in instances:
        ids = tokenizer(render_gold(tokenizer, instance))["input_ids"]
        prompt = _prompt_ids(tokenizer, instance)
        if ids[: len(prompt)] != prompt:
            raise BenchError(f"{instance.id}: the rendered prompt is not a prefix of the run")
        labels = [-100] * len(prompt) + ids[len(prompt) :]
        batches.append((torch.tensor([ids]), torch.tensor([labels])))
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    losses: list[float] = []
    for step in range(steps):
        ids, labels = batches[step % len(batches)]
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.item()))
    return losses


def _prompt_ids(tokenizer: Any, instance: Instance) -> list[int]:
    """The tokens of the prompt as GRPO renders it: tools, user turn, assistant header."""
    env = environment_class(instance.tools, instance.aliases)()
    tools = [getattr(env, name) for name in env.tool_names]
    text = tokenizer.apply_chat_template(
        gold_messages(instance)[:1], tools=tools, add_generation_prompt=True, tokenize=False
    )
    return list(tokenizer(str(text))["input_ids"])
