"""The scripted agent, the three-setting runner and the ``bench`` CLI."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from agentguard.bench.agent import (
    Feedback,
    FinalAnswer,
    MistakeRates,
    ScriptedAgent,
    ToolCall,
    perfect_factory,
    scripted_factory,
)
from agentguard.bench.cli import main
from agentguard.bench.generate import generate_instance, generate_suite
from agentguard.bench.instance import Instance
from agentguard.bench.runner import (
    LayerEvents,
    call_budget,
    run_benchmark,
    run_instance,
    summarize,
)

FIREWALL = importlib.util.find_spec("agentguard.enforcement.firewall") is not None
needs_firewall = pytest.mark.skipif(
    not FIREWALL, reason="agentguard.enforcement.firewall has not landed yet (another helper)"
)


def drive(agent: ScriptedAgent) -> list[object]:
    """Feed every tool call a result until the agent answers."""
    actions: list[object] = []
    feedback = None
    while True:
        action = agent.act(feedback)
        actions.append(action)
        if isinstance(action, FinalAnswer):
            return actions
        feedback = Feedback("result", {"result": 0})


def test_perfect_agent_replays_gold() -> None:
    """With zero mistake rates the scripted agent proposes exactly the gold calls, then answers."""
    inst = generate_instance("fan_out_fan_in", 1, 42)
    actions = drive(ScriptedAgent(inst, 0, MistakeRates(0, 0, 0, 0, 0)))
    assert actions[:-1] == [ToolCall(c.name, dict(c.args)) for c in inst.gold_trace]
    assert actions[-1] == FinalAnswer("ANSWER: 33")


def test_scripted_agent_is_deterministic_and_makes_mistakes() -> None:
    """Same instance and seed -> same plan; across the grid every mistake kind occurs."""
    inst = generate_instance("nested_loops", 3, 42)
    assert drive(ScriptedAgent(inst, 5)) == drive(ScriptedAgent(inst, 5))
    kinds = {m.split("@")[0] for i in generate_suite() for m in ScriptedAgent(i, 0).mistakes}
    assert kinds == {"skip", "swap", "wrong_arg", "early"}


def test_listening_agent_repairs_after_block() -> None:
    """After a block the agent (when it listens) re-plans the missing gold calls in order."""
    inst = generate_instance("forall_processing", 1, 42)
    agent = ScriptedAgent(inst, 0, MistakeRates(0, 0, 0, 1.0, 0))  # always answers early
    first = agent.act(None)
    assert isinstance(first, ToolCall)
    early = agent.act(Feedback("result", {"numbers": []}))
    assert isinstance(early, FinalAnswer)
    nxt = agent.act(Feedback("blocked", message="not yet"))
    assert nxt == ToolCall(inst.gold_trace[1].name, dict(inst.gold_trace[1].args))


def test_insisting_agent_repeats_blocked_call() -> None:
    """With insist rate 1 a blocked call is proposed again unchanged."""
    inst = generate_instance("forall_processing", 1, 42)
    agent = ScriptedAgent(inst, 0, MistakeRates(0, 0, 0, 0, 1.0))
    first = agent.act(None)
    assert agent.act(Feedback("blocked", message="no")) == first


def test_baseline_perfect_agent_scores_full() -> None:
    """Baseline with a mistake-free agent: accuracy 1 and compliance 1 on the paper grid."""
    summary = run_benchmark(generate_suite(), "baseline", perfect_factory())
    assert summary.runs == 120
    assert summary.accuracy == 1.0
    assert summary.compliance == 1.0
    assert set(summary.layer_pass_rates.values()) == {1.0}


def test_baseline_scripted_agent_profile() -> None:
    """The scripted agent loses compliance and accuracy; L3 is its weakest layer (as in Table 4)."""
    summary = run_benchmark(generate_suite(), "baseline", scripted_factory(0))
    assert 0.0 < summary.accuracy < 1.0
    assert 0.5 < summary.compliance < 1.0
    rates = {k: v for k, v in summary.layer_pass_rates.items() if v is not None}
    assert min(rates, key=lambda k: rates[k]) == "L3"
    assert all(e.events == 0 for e in summary.layer_events.values())
    for r in summary.results:
        assert r.num_tool_calls <= call_budget(r.difficulty)


def test_summary_of_nothing() -> None:
    """Summaries of zero runs are well defined."""
    s = summarize("baseline", [])
    assert s.runs == 0
    assert s.layer_pass_rates["L1"] is None


def test_unknown_setting() -> None:
    """An unknown setting is a BenchError."""
    from agentguard.bench.errors import BenchError

    with pytest.raises(BenchError):
        run_instance(generate_instance("loop_termination", 1, 42), "strict")  # type: ignore[arg-type]


@needs_firewall
@pytest.mark.parametrize("setting", ["block-and-warn", "soft-block"])
def test_enforced_perfect_agent_is_never_blocked(setting: str) -> None:
    """Under enforcement a mistake-free agent is never blocked and stays fully compliant."""
    summary = run_benchmark(
        generate_suite(difficulties=[1, 2], seeds=[42]),
        setting,  # type: ignore[arg-type]
        perfect_factory(),
    )
    assert summary.accuracy == 1.0
    assert summary.compliance == 1.0
    assert sum(e.events for e in summary.layer_events.values()) == 0


@needs_firewall
def test_block_and_warn_events_and_resolutions() -> None:
    """Block-and-warn produces per-layer events resolved as listened or insisted."""
    grid = generate_suite(difficulties=[1, 2, 3], seeds=[42])
    summary = run_benchmark(grid, "block-and-warn", scripted_factory(0))
    total = sum(e.events for e in summary.layer_events.values())
    assert total > 0
    for e in summary.layer_events.values():
        assert e.resolved == e.insisted + e.listened
        assert e.resolved <= e.events
    assert summary.stopped == 0


@needs_firewall
def test_soft_block_can_stop_runs() -> None:
    """Soft-block ends runs whose agent keeps insisting (three strikes)."""
    rates = MistakeRates(0.5, 0.5, 0.5, 0.5, 1.0)
    grid = generate_suite(difficulties=[1, 2, 3], seeds=[42])
    summary = run_benchmark(grid, "soft-block", scripted_factory(0, rates))
    assert summary.stopped > 0


# -- CLI ---------------------------------------------------------------------------


def generate(out: Path, options: str) -> int:
    """`agentguard bench generate OPTIONS --out OUT --json`: write instances into ``out``."""
    return main(["bench", "generate", *options.split(), "--out", str(out), "--json"])


def bench_run(instances: Path, options: str = "") -> int:
    """`agentguard bench run INSTANCES OPTIONS`."""
    return main(["bench", "run", str(instances), *options.split()])


def test_cli_generate_writes_json_and_ltl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bench generate` writes an instance JSON and its .ltl spec per retained triplet."""
    code = generate(
        tmp_path, "--template loop_termination fan_out+loop --difficulty 1 2 --seeds 42"
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["written"]) == 4
    inst = Instance.load(tmp_path / "loop_termination-d1-s42.json")
    assert inst.expected_answer == 12
    assert (tmp_path / "fan_out_plus_loop-d2-s42.ltl").read_text() == inst_spec(tmp_path)


def inst_spec(tmp_path: Path) -> str:
    return Instance.load(tmp_path / "fan_out_plus_loop-d2-s42.json").spec_text


def test_cli_generate_reports_drops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Instances past --max-calls are reported as dropped."""
    generate(tmp_path, "--template nested_loops+branching --difficulty 5 --seeds 42 --max-calls 10")
    out = json.loads(capsys.readouterr().out)
    assert out["written"] == []
    assert len(out["dropped"]) == 1


def test_cli_run_baseline_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bench run --json` prints accuracy, compliance, layer pass rates and enforcement."""
    generate(tmp_path, "--difficulty 1 --seeds 42")
    capsys.readouterr()
    assert bench_run(tmp_path, "--setting baseline --json --runs") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == 12
    assert set(out["layer_pass_rates"]) == {"L1", "L2", "L3", "L4", "L5", "L6"}
    assert set(out["enforcement"]["L2"]) == {
        "events",
        "resolved",
        "insisted",
        "listened",
        "insist_rate",
        "insist_rate_resolved",
    }
    assert len(out["results"]) == 12


def test_cli_run_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json the summary is a rich table."""
    generate(tmp_path, "--template forall_processing --difficulty 1 --seeds 42")
    capsys.readouterr()
    assert bench_run(tmp_path, "--trials 2") == 0
    assert "baseline" in capsys.readouterr().out


def test_cli_run_custom_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--agent module:callable loads a user's agent factory."""
    generate(tmp_path, "--template forall_processing --difficulty 1 --seeds 42")
    capsys.readouterr()
    code = bench_run(tmp_path, "--agent agentguard.bench.agent:perfect_factory --json")
    assert code == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad template names, missing instances and bad --agent exit with status 2."""
    assert main(["bench", "generate", "--template", "nope", "--out", str(tmp_path)]) == 2
    assert bench_run(tmp_path) == 2
    (tmp_path / "x.json").write_text("{}")
    assert bench_run(tmp_path) == 2
    assert "error" in capsys.readouterr().err


def test_cli_generate_simplified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--mode simplified writes aliased, augmented simplified instances that run."""
    code = generate(
        tmp_path,
        "--mode simplified --template nested_loops_fixed_2x2 --seeds 3"
        " --augmentation none suffix --aliases 7",
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["written"]) == 2  # variants a and c, augmentation none
    assert len(out["dropped"]) == 2  # a 7-call core cannot take a suffix
    assert bench_run(tmp_path, "--agent agentguard.bench.agent:perfect_factory --json") == 0
    assert json.loads(capsys.readouterr().out)["compliance"] == 1.0


def test_cli_generate_training_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--mode simplified-train writes the balanced 300-example training set."""
    assert generate(tmp_path, "--mode simplified-train") == 0
    assert len(json.loads(capsys.readouterr().out)["written"]) == 300


@needs_firewall
def test_block_and_warn_raises_compliance_over_baseline() -> None:
    """With the same scripted mistakes, block-and-warn ends no less compliant than baseline."""
    grid = list(generate_suite(difficulties=[1, 2, 3], seeds=[123]))
    base = run_benchmark(grid, "baseline", scripted_factory(1))
    warned = run_benchmark(grid, "block-and-warn", scripted_factory(1))
    assert warned.compliance >= base.compliance
    assert warned.accuracy >= base.accuracy


@needs_firewall
def test_cli_run_block_and_warn_table17_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bench run --setting block-and-warn --json` reports events per layer with resolutions."""
    generate(tmp_path, "--difficulty 2 --seeds 42")
    capsys.readouterr()
    assert bench_run(tmp_path, "--setting block-and-warn --json --runs") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["setting"] == "block-and-warn"
    events = out["enforcement"]
    run_events = [ev for r in out["results"] for ev in r["events"]]
    assert run_events
    assert sum(e["events"] for e in events.values()) == sum(len(ev["layers"]) for ev in run_events)
    for e in events.values():
        assert e["resolved"] == e["insisted"] + e["listened"]


@pytest.mark.parametrize(
    ("events", "resolved", "insisted", "listened", "paper_rate"),
    [
        (1213, 1201, 2, 1199, 0.16),
        (61_111, 59_208, 2492, 56_716, 4.08),
        (62_811, 62_051, 680, 61_371, 1.08),
        (10_088, 9695, 50, 9645, 0.50),
    ],
)
def test_insist_rate_is_insisted_over_events_as_table_17(
    events: int, resolved: int, insisted: int, listened: int, paper_rate: float
) -> None:
    """Table 17's insist rates are insisted ÷ events; insisted ÷ resolved is its own field."""
    row = LayerEvents(events, resolved, insisted, listened)
    assert row.insist_rate is not None and row.insist_rate_resolved is not None
    assert round(100 * row.insist_rate, 2) == paper_rate
    assert row.insist_rate_resolved == insisted / resolved


def test_insist_rate_without_events_is_none() -> None:
    """A layer with no events has no insist rate (Table 17's dashes)."""
    assert LayerEvents().insist_rate is None
    assert LayerEvents().insist_rate_resolved is None
