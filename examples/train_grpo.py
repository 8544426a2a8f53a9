"""GRPO fine-tuning under the compliance reward, then the paper's held-out evaluation.

AgentLTL Section 4.3 fine-tunes a model with GRPO (TRL) under R = 0.5·C + 0.25·Acc +
0.25·R_dist, LoRA adapters via peft, on 300 simplified-mode examples, and validates it on
held-out splits: unseen patterns and unseen tool-name aliases among them. This script runs
that path on any causal LM whose chat template TRL can parse (Qwen3, Llama 3.x, ...):

    python examples/train_grpo.py train --model Qwen/Qwen3-4B-Instruct-2507 --output runs/grpo
    python examples/train_grpo.py evaluate --model runs/grpo --firewall both
    python examples/train_grpo.py evaluate --model Qwen/Qwen3-4B-Instruct-2507   # the base
    python examples/train_grpo.py tiny --output runs/tiny   # a CPU stand-in for --model

``train`` rolls out with executed tools (TRL's ``environment_factory``: each tool call the
model writes runs on the instance's tools and the result is fed back) and writes a LoRA
adapter plus ``agentguard_grpo.json`` (the settings used). ``evaluate`` runs the model as
an agent on held-out instances with the firewall off (``baseline``) and on
(``block-and-warn`` by default, the paper's Section 4.2 harness) and prints accuracy,
compliance and the reward per split. Defaults are the paper's hyper-parameters where it
gives them, ours where it is silent (``--help`` says which); docs/training.md has the
whole path and the hardware. Needs ``pip install 'agentguard[train]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, cast

from agentguard.bench.agent import AgentFactory
from agentguard.bench.chat_agent import chat_model_factory
from agentguard.bench.environment import grpo_environments, grpo_rows
from agentguard.bench.instance import Instance
from agentguard.bench.reward import RewardWeights, compliance_reward, make_grpo_reward
from agentguard.bench.runner import Setting, run_benchmark
from agentguard.bench.simplified import (
    SIMPLIFIED_TEMPLATES,
    SPLITS,
    TRAINING_TEMPLATES,
    Split,
    generate_simplified,
    round_robin,
    training_set,
    validation_split,
)
from agentguard.errors import AgentGuardError, MissingExtraError

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental

PAPER = "paper"
OURS = "ours"


def _opt(default: Any, source: str, text: str, choices: tuple[str, ...] | None = None) -> Any:
    return field(default=default, metadata={"source": source, "help": text, "choices": choices})


@dataclass(frozen=True, slots=True)
class LoraSettings:
    """The LoRA adapter of Appendix E.3 (all four values are the paper's)."""

    rank: int = _opt(8, PAPER, "LoRA rank r (E.3)")
    alpha: int = _opt(16, PAPER, "LoRA scaling alpha (E.3)")
    dropout: float = _opt(0.05, PAPER, "LoRA dropout (E.3)")
    target_modules: tuple[str, ...] = _opt(("q_proj", "v_proj"), PAPER, "modules adapted (E.3)")


@dataclass(frozen=True, slots=True)
class GrpoSettings:
    """GRPO's settings: Section 4.3 / E.3 where given, ours where the paper is silent."""

    num_generations: int = _opt(16, PAPER, "rollouts per prompt, N (4.3, E.3)")
    beta: float = _opt(1e-3, PAPER, "KL coefficient (4.3, E.3)")
    epochs: float = _opt(1.0, PAPER, "passes over the training set (4.3)")
    train_size: int = _opt(300, PAPER, "training examples, balanced over 15 templates (D.3)")
    reward_alpha: float = _opt(0.5, PAPER, "R = a·C + (1-a)/2·Acc + (1-a)/2·R_dist (E.1)")
    bf16: bool = _opt(False, PAPER, "bf16 mixed precision (the paper trains in fp32, E.3)")
    shuffle: bool = _opt(False, PAPER, "shuffle the prompts (E.3: no, round-robin order)")
    learning_rate: float = _opt(1e-5, OURS, "AdamW learning rate")
    prompts_per_step: int = _opt(1, OURS, "prompts per optimizer step (x N rollouts each)")
    gradient_accumulation_steps: int = _opt(1, OURS, "micro-batches per optimizer step")
    max_completion_length: int = _opt(1024, OURS, "tokens per rollout, tool results included")
    max_tool_calling_iterations: int = _opt(20, OURS, "tool turns per rollout (10d+10, d=1)")
    temperature: float = _opt(1.0, OURS, "sampling temperature of the rollouts")
    loss_type: str = _opt("dapo", OURS, "TRL's GRPO loss variant (TRL 1.16's default)")
    max_steps: int = _opt(-1, OURS, "stop after this many steps (-1: the epochs decide)")
    gradient_checkpointing: bool = _opt(True, OURS, "trade compute for memory")
    save_steps: int = _opt(50, OURS, "checkpoint every this many steps (0: only at the end)")
    logging_steps: int = _opt(1, OURS, "log every this many steps")
    seed: int = _opt(0, OURS, "trainer seed")


OWN = frozenset(
    {"epochs", "train_size", "reward_alpha", "prompts_per_step", "save_steps", "shuffle"}
)
"""The GrpoSettings the script maps itself; every other one is named as ``trl.GRPOConfig``'s
own field and passed to it unchanged."""


@dataclass(frozen=True, slots=True)
class EvalSettings:
    """How the model acts in evaluation (the paper does not say; all ours)."""

    max_new_tokens: int = _opt(512, OURS, "tokens per model turn (greedy decoding)")
    device: str = _opt("auto", OURS, "where the model runs (auto: cuda if there is one)")
    harness: str = _opt(
        "block-and-warn", OURS, "the firewall-on setting", ("block-and-warn", "soft-block")
    )


def _add_settings(parser: argparse.ArgumentParser, cls: type[Any], prefix: str = "") -> None:
    """One ``--option`` per field of ``cls``; the help says whose default it is."""
    group = parser.add_argument_group(cls.__name__, cls.__doc__)
    for f in fields(cls):
        flag = "--" + prefix + f.name.replace("_", "-")
        choices = f.metadata["choices"]
        text = f"{f.metadata['help']}{' (' + '|'.join(choices) + ')' if choices else ''}"
        text += f" [{f.metadata['source']}: {f.default}]"
        dest, metavar = f"{cls.__name__}.{f.name}", f.name.upper()
        if isinstance(f.default, bool):
            group.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, help=text)
        elif isinstance(f.default, tuple):
            group.add_argument(flag, dest=dest, nargs="+", metavar=metavar, help=text)
        else:
            kind = type(f.default)
            group.add_argument(
                flag, dest=dest, type=kind, choices=choices, metavar=metavar, help=text
            )


def _settings(args: argparse.Namespace, cls: type[Any]) -> Any:
    """The defaults of ``cls`` with the options given on the command line."""
    given = {
        f.name: getattr(args, f"{cls.__name__}.{f.name}")
        for f in fields(cls)
        if getattr(args, f"{cls.__name__}.{f.name}", None) is not None
    }
    return replace(cls(), **{k: tuple(v) if isinstance(v, list) else v for k, v in given.items()})


def _require() -> dict[str, Any]:
    """The ``[train]`` extra's modules, or MissingExtraError naming the one missing."""
    modules: dict[str, Any] = {}
    for name in ("torch", "datasets", "transformers", "peft", "trl"):
        try:
            modules[name] = __import__(name)
        except ImportError as exc:
            raise MissingExtraError("train", name) from exc
    return modules


def load_policy(model: str, *, base: str | None = None) -> tuple[Any, Any]:
    """A model and its tokenizer from a local directory or a hub name, in fp32 (E.3).

    A directory holding ``adapter_config.json`` (what ``train`` writes) is a LoRA adapter:
    its base (``--base``, else the one the adapter names) is loaded and the adapter put on.
    """
    m = _require()
    torch, transformers = m["torch"], m["transformers"]
    adapter = Path(model, "adapter_config.json")
    if adapter.is_file():
        base = base or json.loads(adapter.read_text())["base_model_name_or_path"]
    path = base or model
    policy = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    if adapter.is_file():
        policy = m["peft"].PeftModel.from_pretrained(policy, model)
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        model if Path(model, "tokenizer_config.json").is_file() else path
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return policy, tokenizer


# -- train ------------------------------------------------------------------------------


def train_instances(args: argparse.Namespace, grpo: GrpoSettings) -> list[Instance]:
    """``--instances`` files, else the paper's balanced set; in round-robin order (E.3)."""
    if args.instances:
        found = [p for d in args.instances for p in sorted(Path(d).glob("*.json"))]
        instances = [Instance.load(p) for p in found]
    else:
        instances = training_set(grpo.train_size)
    ordered = round_robin(instances)
    return ordered[: args.limit] if args.limit else ordered


LOGGED = {
    "step": "step",
    "reward": "rewards/agentltl_reward/mean",
    "compliance": "agentltl_reward/compliance",
    "accuracy": "agentltl_reward/accuracy",
    "r_dist": "agentltl_reward/distance",
    "tool_calls": "tools/call_frequency",
}
"""What ``agentguard_grpo.json`` keeps of each logged step: the reward and its terms."""


def train(args: argparse.Namespace) -> int:
    """Fine-tune ``--model`` with GRPO and LoRA; write the adapter to ``--output``."""
    m = _require()
    lora, grpo = _settings(args, LoraSettings), _settings(args, GrpoSettings)
    instances = train_instances(args, grpo)
    model, tokenizer = load_policy(args.model)
    config = m["trl"].GRPOConfig(
        output_dir=str(args.output),
        num_train_epochs=grpo.epochs,
        per_device_train_batch_size=grpo.prompts_per_step * grpo.num_generations,
        shuffle_dataset=grpo.shuffle,
        fp16=False,
        save_strategy="steps" if grpo.save_steps > 0 else "no",
        save_steps=max(grpo.save_steps, 1),
        report_to=args.report_to,
        **{f.name: getattr(grpo, f.name) for f in fields(grpo) if f.name not in OWN},
    )
    trainer = m["trl"].GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[make_grpo_reward(weights=RewardWeights.from_alpha(grpo.reward_alpha))],
        args=config,
        train_dataset=m["datasets"].Dataset.from_list(grpo_rows(instances)),
        environment_factory=grpo_environments(instances),
        peft_config=m["peft"].LoraConfig(
            r=lora.rank,
            lora_alpha=lora.alpha,
            lora_dropout=lora.dropout,
            target_modules=list(lora.target_modules),
            task_type="CAUSAL_LM",
        ),
    )
    started = time.perf_counter()
    trainer.train()
    trainer.save_model(str(args.output))
    tokenizer.save_pretrained(str(args.output))
    log = [{k: h.get(v) for k, v in LOGGED.items()} for h in trainer.state.log_history]
    record = {
        "base_model": args.model,
        "lora": asdict(lora),
        "grpo": asdict(grpo),
        "train_instances": len(instances),
        "steps": trainer.state.global_step,
        "seconds": round(time.perf_counter() - started, 1),
        "log": [row for row in log if row["reward"] is not None],
    }
    Path(args.output, "agentguard_grpo.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{record['steps']} GRPO steps in {record['seconds']}s; adapter in {args.output}")
    return 0


# -- evaluate ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SplitScore:
    """One (split, firewall) cell of the report: Table 2's columns plus the reward."""

    split: str
    firewall: str
    setting: str
    runs: int
    accuracy: float
    compliance: float
    reward: float
    mean_tool_calls: float
    blocked: int
    results: tuple[dict[str, Any], ...] = ()


def score_split(
    split: str, firewall: str, setting: str, instances: Sequence[Instance], factory: AgentFactory
) -> SplitScore:
    """Run ``instances`` under ``setting``; the reward of each run is Eq. (2) on its
    executed trace and answer."""
    summary = run_benchmark(instances, cast(Setting, setting), factory)
    rows: list[dict[str, Any]] = []
    for inst, run in zip(instances, summary.results, strict=True):
        r = compliance_reward(
            run.trace,
            run.answer,
            spec=inst.spec_text,
            gold_trace=inst.gold_records(),
            expected_answer=inst.expected_answer,
        )
        terms = {"reward": r.reward, "shaped_accuracy": r.accuracy, "r_dist": r.distance}
        rows.append({**run.to_dict(), **terms, "trace": [c.to_record() for c in run.trace]})
    n = max(len(rows), 1)
    return SplitScore(
        split=split,
        firewall=firewall,
        setting=setting,
        runs=len(rows),
        accuracy=summary.accuracy,
        compliance=summary.compliance,
        reward=sum(r["reward"] for r in rows) / n,
        mean_tool_calls=summary.mean_tool_calls,
        blocked=sum(len(r.events) for r in summary.results),
        results=tuple(rows),
    )


def eval_sets(args: argparse.Namespace) -> dict[str, list[Instance]]:
    """``--instances`` directories (named after the folder), else ``--split`` names."""
    if args.instances:
        return {
            Path(d).name: [Instance.load(p) for p in sorted(Path(d).glob("*.json"))][: args.size]
            for d in args.instances
        }
    return {s: validation_split(cast(Split, s), args.size) for s in args.split}


def evaluate(args: argparse.Namespace) -> int:
    """Accuracy, compliance and reward per held-out split, firewall off and on."""
    settings: EvalSettings = _settings(args, EvalSettings)
    policy, tokenizer = load_policy(args.model, base=args.base)
    if settings.device != "auto":
        policy.to(settings.device)
    elif _require()["torch"].cuda.is_available():
        policy.to("cuda")
    policy.eval()
    factory = chat_model_factory(policy, tokenizer, max_new_tokens=settings.max_new_tokens)
    modes = {"off": "baseline", "on": settings.harness}
    wanted = ("off", "on") if args.firewall == "both" else (args.firewall,)
    head = ("runs", 5), ("acc", 8), ("C", 8), ("reward", 8), ("calls", 7), ("blocked", 8)
    print(f"{'split':<16}{'firewall':<10}" + "".join(f"{h:>{w}}" for h, w in head))
    cells: list[SplitScore] = []
    for split, instances in eval_sets(args).items():
        for fw in wanted:
            cell = score_split(split, fw, modes[fw], instances, factory)
            cells.append(cell)
            print(
                f"{split:<16}{fw:<10}{cell.runs:>5}{cell.accuracy:>8.3f}{cell.compliance:>8.3f}"
                f"{cell.reward:>8.3f}{cell.mean_tool_calls:>7.1f}{cell.blocked:>8}",
                flush=True,
            )
    if args.report:
        report = {
            "model": args.model,
            "eval": asdict(settings),
            "cells": [asdict(c) for c in cells],
        }
        Path(args.report).write_text(json.dumps(report, indent=1, default=str) + "\n")
    return 0


# -- tiny -------------------------------------------------------------------------------


def tiny(args: argparse.Namespace) -> int:
    """A local checkpoint for CPU runs: :mod:`agentguard.bench.tiny`'s two-layer Qwen3 with a
    tokenizer trained on the benchmark's text, warm-started on gold runs so that it writes
    tool calls. It stands in for ``--model`` where no real model can be had; it cannot
    solve the benchmark."""
    torch = _require()["torch"]
    from agentguard.bench.tiny import tiny_model, train_tokenizer, warm_start

    torch.set_num_threads(args.threads)
    runs = [generate_simplified(t, s) for s in range(args.seeds) for t in args.templates]
    tokenizer = train_tokenizer(runs)
    model = tiny_model(tokenizer)
    losses = warm_start(model, tokenizer, runs, steps=args.steps)
    model.save_pretrained(args.output)
    tokenizer.save_pretrained(args.output)
    print(f"tiny model in {args.output}: warm-start loss {losses[0]:.2f} -> {losses[-1]:.2f}")
    return 0


# -- command line -----------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="train_grpo.py", description=__doc__.split("\n\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="GRPO + LoRA with executed rollouts")
    t.add_argument("--model", required=True, help="a local checkpoint or a hub name")
    t.add_argument("--output", required=True, type=Path, help="where the adapter goes")
    t.add_argument(
        "--instances",
        nargs="+",
        help="directories of instance .json files (default: the paper's 300 from `training_set()`)",
    )
    t.add_argument("--limit", type=int, default=0, help="train on the first N only (0: all)")
    t.add_argument("--report-to", default="none", help="TRL's report_to (wandb, tensorboard, ...)")
    _add_settings(t, LoraSettings, "lora-")
    _add_settings(t, GrpoSettings)
    t.set_defaults(func=train)
    e = sub.add_parser("evaluate", help="held-out splits, firewall off and on")
    e.add_argument("--model", required=True, help="a checkpoint, hub name or adapter directory")
    e.add_argument("--base", help="the base model of an adapter (default: the one it names)")
    e.add_argument(
        "--split",
        nargs="+",
        choices=SPLITS,
        default=["unseen-pattern", "diverse-tool"],
        help="Table 2's held-out splits, built in memory (default: unseen-pattern diverse-tool)",
    )
    e.add_argument("--instances", nargs="+", help="directories of instance .json files instead")
    e.add_argument(
        "--size", type=int, default=None, help="instances per split (default: Table 2's)"
    )
    e.add_argument(
        "--firewall",
        choices=("on", "off", "both"),
        default="both",
        help="off: baseline; on: every constraint enforced (--harness) (default: both)",
    )
    e.add_argument("--report", type=Path, help="write every run and score as JSON here")
    _add_settings(e, EvalSettings)
    e.set_defaults(func=evaluate)
    w = sub.add_parser("tiny", help="save a tiny CPU model to try the path without a real one")
    w.add_argument("--output", required=True, type=Path, help="where the checkpoint goes")
    w.add_argument(
        "--templates",
        nargs="+",
        default=list(TRAINING_TEMPLATES[:2]),
        choices=SIMPLIFIED_TEMPLATES,
        help="whose gold runs it is warm-started on (default: the first two training ones)",
    )
    w.add_argument("--seeds", type=int, default=3, help="gold runs per template (seeds 0..N-1)")
    w.add_argument("--steps", type=int, default=150, help="supervised warm-start steps")
    w.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    w.set_defaults(func=tiny)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AgentGuardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
