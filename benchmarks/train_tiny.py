"""Does the compliance reward carry a learning signal inside a real GRPO trainer?

Run: ``python benchmarks/train_tiny.py [--steps 100] [--window 20] [--sft-steps 100]``
(needs ``agentguard[train]``; CPU only, no download).

A tokenizer is trained on the benchmark's own text and a two-layer Qwen3 decoder is
initialised at random (:mod:`agentguard.bench.tiny`). A short supervised pass on the gold
runs of one simple template (``loop_termination``, difficulty 1) teaches it the tool-call
format, then ``trl.GRPOTrainer`` trains it on that template's instances with executed
rollouts (:mod:`agentguard.bench.environment`: its tool calls run on the instance's tools
and the results are fed back) under ``make_grpo_reward()``. Printed: the mean reward and
its three terms per window of ``--window`` GRPO steps, the wall time of each phase, and
the change in compliance from the first window to the last.

This demonstrates the signal on a toy model, not the paper's result (+38 / +17.5 points
on held-out patterns with a real model and LoRA): see docs/training.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100, help="GRPO steps")
    parser.add_argument("--window", type=int, default=20, help="steps per printed window")
    parser.add_argument("--sft-steps", type=int, default=100, help="supervised warm-start steps")
    parser.add_argument("--warm-seeds", type=int, default=4, help="instances in the warm start")
    parser.add_argument("--train-seeds", type=int, default=8, help="instances GRPO trains on")
    parser.add_argument("--generations", type=int, default=4, help="rollouts per prompt")
    parser.add_argument("--prompts", type=int, default=1, help="prompts per step")
    parser.add_argument("--lr", type=float, default=2e-4, help="GRPO learning rate")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()

    t0 = time.perf_counter()
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    from agentguard.bench.environment import grpo_environments, grpo_rows
    from agentguard.bench.generate import generate_instance
    from agentguard.bench.reward import make_grpo_reward
    from agentguard.bench.tiny import tiny_model, train_tokenizer, warm_start

    torch.set_num_threads(args.threads)
    t_import = time.perf_counter() - t0

    instances = [generate_instance("loop_termination", 1, s) for s in range(args.train_seeds)]
    t1 = time.perf_counter()
    tokenizer = train_tokenizer(instances)
    model = tiny_model(tokenizer)
    losses = warm_start(model, tokenizer, instances[: args.warm_seeds], steps=args.sft_steps)
    t_sft = time.perf_counter() - t1
    print(
        f"import {t_import:.1f}s; tokenizer ({len(tokenizer)} tokens) + warm start "
        f"({args.sft_steps} steps on {args.warm_seeds} gold runs, loss {losses[0]:.2f} -> "
        f"{losses[-1]:.2f}): {t_sft:.1f}s",
        flush=True,
    )

    reward = make_grpo_reward()
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            max_steps=args.steps,
            per_device_train_batch_size=args.prompts * args.generations,
            num_generations=args.generations,
            max_completion_length=96,
            max_tool_calling_iterations=8,
            learning_rate=args.lr,
            logging_steps=1,
            report_to=[],
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            seed=0,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[reward],
            args=config,
            train_dataset=Dataset.from_list(grpo_rows(instances)),
            processing_class=tokenizer,
            environment_factory=grpo_environments(instances),
        )
        trainer.remove_callback(PrinterCallback)  # one line per window, not per step
        t_start = [time.perf_counter()]
        trainer.add_callback(_printer(args.window, t_start))
        t2 = t_start[0]
        trainer.train()
        t_grpo = time.perf_counter() - t2

    steps = [h for h in trainer.state.log_history if "reward" in h]
    windows = [_window(steps[k : k + args.window]) for k in range(0, len(steps), args.window)]
    first, last = windows[0]["compliance"], windows[-1]["compliance"]
    print(
        f"compliance, first window -> last: {first:.3f} -> {last:.3f} ({last - first:+.3f}); "
        f"GRPO {len(steps)} steps in {t_grpo:.0f}s ({t_grpo / max(len(steps), 1):.1f}s/step); "
        f"total {time.perf_counter() - t0:.0f}s",
        flush=True,
    )


KEYS = {
    "reward": "rewards/agentltl_reward/mean",
    "compliance": "agentltl_reward/compliance",
    "accuracy": "agentltl_reward/accuracy",
    "R_dist": "agentltl_reward/distance",
    "tool calls": "tools/call_frequency",
}


def _window(chunk: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.fmean(h[v] for h in chunk) for k, v in KEYS.items()}


def _printer(window: int, t_start: list[float]) -> object:
    """A TrainerCallback printing one line per window as it closes (long runs show progress)."""
    from transformers import TrainerCallback

    class WindowPrinter(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.rows: list[dict[str, float]] = []
            print(
                f"{'steps':>9} " + " ".join(f"{k:>10}" for k in KEYS) + f" {'wall':>7}", flush=True
            )

        def on_log(
            self,
            args: object,
            state: object,
            control: object,
            logs: dict[str, float] | None = None,
            **kw: object,
        ) -> None:
            del args, control, kw  # TrainerCallback's signature; only the logs matter here
            if logs and "reward" in logs:
                self.rows.append(logs)
            if len(self.rows) == window:
                row, n = _window(self.rows), state.global_step  # type: ignore[attr-defined]
                span = f"{n - window + 1}-{n}"
                wall = time.perf_counter() - t_start[0]
                print(
                    f"{span:>9} " + " ".join(f"{row[k]:10.3f}" for k in KEYS) + f" {wall:6.0f}s",
                    flush=True,
                )
                self.rows = []

    return WindowPrinter()


if __name__ == "__main__":
    main()
