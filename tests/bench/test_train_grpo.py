"""The reward inside a real trainer: two ``trl.GRPOTrainer`` steps with executed rollouts.

A tokenizer trained here on the benchmark's own text, a two-layer Qwen3 decoder built from a
config (no downloaded weights), a short supervised warm start so the policy writes tool
calls, then two GRPO steps in which TRL's own tool loop calls the instance's tools. The
rewards TRL logged must equal agentguard's scores of the traces that ran.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

import pytest

from agentguard.bench.environment import grpo_environments, grpo_rows
from agentguard.bench.generate import generate_instance
from agentguard.bench.reward import completion_trace, compliance_reward, make_grpo_reward
from agentguard.bench.tools import Toolbox
from agentguard.errors import MissingExtraError
from agentguard.trace.model import Trace

torch = pytest.importorskip("torch")
datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")

from agentguard.bench.tiny import tiny_model, train_tokenizer, warm_start  # noqa: E402

# TRL 1.16 still sets and reads transformers' `gradient_checkpointing*` names, which
# transformers 5.25 deprecates for v6: TRL's own calls, not this package's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`(is_)?gradient_checkpointing\\w*` is deprecated:FutureWarning"
)


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without TRL, building the tokenizer says to install agentguard[train]."""
    monkeypatch.setitem(sys.modules, "trl.chat_template_utils", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'agentguard\[train\]'"):
        train_tokenizer([generate_instance("loop_termination", 1, 0)])


class _Probe:
    """A zero-weight reward that keeps what each step's real reward saw.

    TRL reuses environment objects across batches, so the executed records are copied
    here, when the batch is scored; a callback copies TRL's per-completion rewards of the
    same batch when the step is logged.
    """

    __name__ = "probe"

    def __init__(self) -> None:
        self.batches: list[dict[str, Any]] = []

    def __call__(
        self, completions: list[Any], environments: list[Any], **columns: Any
    ) -> list[float]:
        self.batches.append(
            {
                "completions": json.loads(json.dumps(completions)),
                "records": [json.loads(json.dumps(e.records)) for e in environments],
                **{
                    k: list(columns[k])
                    for k in ("spec", "gold_trace", "expected_answer", "seed", "difficulty")
                },
            }
        )
        return [0.0] * len(completions)


def test_two_grpo_steps_score_the_executed_traces(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TRL executes the tool calls and its logged rewards equal agentguard's scores of those traces."""
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(1)  # two shared cores: more threads only contend
    instances = [generate_instance("loop_termination", 1, s) for s in (0, 1)]
    tokenizer = train_tokenizer(instances)
    model = tiny_model(tokenizer)
    losses = warm_start(model, tokenizer, instances, steps=100)
    assert losses[-1] < losses[0] / 5

    probe = _Probe()
    logged: list[list[float]] = []
    trainer: Any = None

    class KeepRewards(transformers.TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if logs and "reward" in logs:
                logged.append(list(trainer._logs["rewards"]["agentltl_reward"]))

    config = trl.GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=96,
        max_tool_calling_iterations=6,
        reward_weights=[1.0, 0.0],
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[make_grpo_reward(), probe],
        args=config,
        train_dataset=datasets.Dataset.from_list(grpo_rows(instances)),
        processing_class=tokenizer,
        environment_factory=grpo_environments(instances),
        callbacks=[KeepRewards()],
    )
    trainer.train()

    steps = [h for h in trainer.state.log_history if "reward" in h]
    assert len(steps) == len(probe.batches) == len(logged) == 2
    executed = 0
    for step, batch, rewards in zip(steps, probe.batches, logged, strict=True):
        ours = []
        for k, (completion, records) in enumerate(
            zip(batch["completions"], batch["records"], strict=True)
        ):
            # the tools really ran: each result is what the instance's tools return ...
            box = Toolbox(batch["seed"][k], batch["difficulty"][k], ("tool_a",))
            for r in records:
                if "error" not in r["tool_result"]:
                    assert r["tool_result"] == box.call(r["tool_name"], r["arguments"])
            # ... and is what the model was shown, in order; TRL drops the last results
            # when they would overflow max_completion_length, but those calls ran
            shown = [json.loads(m["content"]) for m in completion if m["role"] == "tool"]
            assert shown == [r["tool_result"] for r in records][: len(shown)]
            executed += len(records)
            _, answer = completion_trace(completion)
            ours.append(
                compliance_reward(
                    Trace.from_records(records),
                    answer,
                    spec=batch["spec"][k],
                    gold_trace=json.loads(batch["gold_trace"][k]),
                    expected_answer=int(batch["expected_answer"][k]),
                ).reward
            )
        assert rewards == pytest.approx(ours, abs=1e-6)
        assert step["rewards/agentltl_reward/mean"] == pytest.approx(
            math.fsum(ours) / len(ours), abs=1e-6
        )
        assert step["tools/call_frequency"] == pytest.approx(
            sum(len(r) for r in batch["records"]) / len(batch["records"])
        )
    assert executed > 0, "no tool call ran in two steps: the warm start did not take"
    assert os.environ["TRL_EXPERIMENTAL_SILENCE"] == "1"
