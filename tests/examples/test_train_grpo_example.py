"""``examples/train_grpo.py`` end to end on CPU: train a LoRA adapter, evaluate it held out.

The script's ``tiny`` command saves a two-layer Qwen3 (random weights, a tokenizer trained
on the benchmark's text; no download), warm-started on gold runs of one training template
and of the two unseen-pattern templates at seeds the held-out split never uses: so that it
writes tool calls, in training and in front of the firewall. ``agentguard bench generate``
writes two training instances, ``train`` runs two GRPO steps on them with executed rollouts
and the paper's LoRA settings, and ``evaluate`` runs the adapter on held-out instances with
the firewall off and on. This checks the path, not the paper's result: a model this small,
warm-started on the held-out templates themselves, learns nothing in two steps.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentguard.bench.reward import RewardWeights
from agentguard.bench.simplified import HELD_OUT_FIRST_SEED, validation_split
from agentguard.cli.main import main as agentguard_cli
from agentguard.language import parse_spec
from agentguard.monitor import Monitor, Verdict
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Call

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("datasets")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_grpo.py"

# TRL 1.16 still sets and reads transformers' `gradient_checkpointing*` names, which
# transformers 5.25 deprecates for v6: TRL's own calls, not this package's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`(is_)?gradient_checkpointing\\w*` is deprecated:FutureWarning",
    "ignore:'pin_memory' argument is set as true but no accelerator:UserWarning",
)


@pytest.fixture(scope="module")
def example() -> ModuleType:
    """The script as a module (registered: its dataclasses resolve their annotations)."""
    spec = importlib.util.spec_from_file_location("example_train_grpo", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def checkpoint(example: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local checkpoint of the tiny model, as ``--model`` takes one (``tiny``)."""
    path = tmp_path_factory.mktemp("tiny")
    templates = ["three_call_branch_bridge", "loop_termination", "branch_selection"]
    assert example.main(["tiny", "--output", str(path), "--templates", *templates]) == 0
    return path


def test_missing_extra_names_it(
    example: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without peft, `train` exits 2 and says to install agentguard[train]."""
    monkeypatch.setitem(sys.modules, "peft", None)
    assert example.main(["train", "--model", "x", "--output", "y"]) == 2
    assert "peft is not installed: pip install 'agentguard[train]'" in capsys.readouterr().err


def test_defaults_are_the_papers(example: ModuleType) -> None:
    """LoRA r=8, alpha=16, dropout 0.05 on q_proj/v_proj; N=16, beta=1e-3, one epoch, 300."""
    lora, grpo = example.LoraSettings(), example.GrpoSettings()
    assert (lora.rank, lora.alpha, lora.dropout, lora.target_modules) == (
        8,
        16,
        0.05,
        ("q_proj", "v_proj"),
    )
    assert (grpo.num_generations, grpo.beta, grpo.epochs, grpo.train_size) == (16, 1e-3, 1.0, 300)
    assert RewardWeights.from_alpha(grpo.reward_alpha) == RewardWeights(0.5, 0.25, 0.25)


def test_train_then_evaluate_firewall_off_and_on(
    example: ModuleType, checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two GRPO steps write a LoRA adapter; its held-out report has both firewall settings,
    scores in [0, 1], and the firewall-on runs executed nothing the spec forbids unasked."""
    out, report, data = tmp_path / "adapter", tmp_path / "report.json", tmp_path / "train"
    generate = [
        "bench",
        "generate",
        "--mode",
        "simplified",
        "--template",
        "three_call_branch_bridge",
    ]
    assert agentguard_cli([*generate, "--seeds", "5", "6", "--out", str(data), "--json"]) == 0
    train = ["train", "--model", str(checkpoint), "--output", str(out), "--instances", str(data)]
    tiny = ["--max-steps", "2", "--num-generations", "4", "--save-steps", "0"]
    tiny += ["--max-completion-length", "64", "--max-tool-calling-iterations", "4"]
    assert example.main([*train, *tiny, "--no-gradient-checkpointing"]) == 0
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert (adapter["r"], adapter["lora_alpha"], adapter["lora_dropout"]) == (8, 16, 0.05)
    assert set(adapter["target_modules"]) == {"q_proj", "v_proj"}
    assert adapter["base_model_name_or_path"] == str(checkpoint)
    assert (out / "adapter_model.safetensors").stat().st_size > 0
    record = json.loads((out / "agentguard_grpo.json").read_text())
    assert record["steps"] == 2
    assert record["train_instances"] == 2  # the two files `bench generate` wrote
    assert [row["step"] for row in record["log"]] == [1, 2]
    assert all(0.0 <= row["reward"] <= 1.0 for row in record["log"])
    assert sum(row["tool_calls"] for row in record["log"]) > 0, "no tool ran in the rollouts"

    argv = ["evaluate", "--model", str(out), "--split", "unseen-pattern", "diverse-tool"]
    argv += ["--size", "2", "--max-new-tokens", "32", "--report", str(report)]
    assert example.main(argv) == 0
    printed = capsys.readouterr().out
    cells = json.loads(report.read_text())["cells"]
    assert [(c["split"], c["firewall"], c["setting"]) for c in cells] == [
        ("unseen-pattern", "off", "baseline"),
        ("unseen-pattern", "on", "block-and-warn"),
        ("diverse-tool", "off", "baseline"),
        ("diverse-tool", "on", "block-and-warn"),
    ]
    instances = {
        i.id: i for s in ("unseen-pattern", "diverse-tool") for i in validation_split(s, 2)
    }
    for cell in cells:
        assert cell["runs"] == 2
        assert f"{cell['split']:<16}{cell['firewall']:<10}" in printed
        for key in ("accuracy", "compliance", "reward"):
            assert 0.0 <= cell[key] <= 1.0
        assert (cell["blocked"] > 0) == (cell["firewall"] == "on")
        for run in cell["results"]:
            inst = instances[run["instance"]]
            assert inst.seed >= HELD_OUT_FIRST_SEED
            # the reward's C is the compliance the runner scored on the same executed trace
            assert run["reward"] == pytest.approx(
                0.5 * run["compliance"] + 0.25 * run["shaped_accuracy"] + 0.25 * run["r_dist"]
            )
            assert math.isfinite(run["reward"])
            if cell["firewall"] == "on":
                _only_insisted_violations_ran(inst.spec_text, run)
    on = [r for c in cells if c["firewall"] == "on" for r in c["results"]]
    assert any(r["trace"] for r in on), "the model ran no tool under the firewall"


def _only_insisted_violations_ran(spec_text: str, run: dict[str, Any]) -> None:
    """Replay the executed trace on a fresh monitor: a call (or the final answer) that
    violates a constraint at its prefix ran only as BLOCK_AND_WARN's override, i.e. right
    after the model insisted on the identical call that had just been blocked."""
    monitor = Monitor(parse_spec(spec_text))
    insisted = {(e["step"], e["tool"]) for e in run["events"] if e["resolution"] == "insisted"}
    for k, record in enumerate(run["trace"]):
        peek = monitor.peek(Call(record["tool_name"], record["arguments"]))
        if any(peek.verdicts[n] is Verdict.VIOLATED for n in peek.changed):
            assert (k, record["tool_name"]) in insisted, f"{run['instance']}: call {k} ran"
        monitor.step(Call(record["tool_name"], record["arguments"], record.get("tool_result")))
    if run["answer"] is not None and not run["stopped"]:
        end = monitor.peek(Call(FINAL_TOOL, {"answer": run["answer"]}), ending=True)
        if False in end.final.values():
            assert (len(run["trace"]), FINAL_TOOL) in insisted, f"{run['instance']}: answered"
