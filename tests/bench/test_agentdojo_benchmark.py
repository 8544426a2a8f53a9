"""benchmarks/agentdojo.py on a small subset: what it prints and writes is what
AgentDojo's own benchmark functions compute for the same pipelines."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from agentdojo.agent_pipeline import (
    AgentPipeline,
    InitQuery,
    SystemMessage,
    ToolsExecutionLoop,
    ToolsExecutor,
)
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.benchmark import (
    benchmark_suite_with_injections,
    benchmark_suite_without_injections,
)
from agentdojo.logging import OutputLogger
from agentdojo.task_suite.load_suites import get_suite
from agentguard.integrations.agentdojo import guard_pipeline

from agentguard.testing.agentdojo_models import ScriptedAgent

ROOT = Path(__file__).resolve().parents[2]
USERS = ["user_task_0", "user_task_3", "user_task_9"]
INJECTIONS = ["injection_task_1", "injection_task_4", "injection_task_7"]


def pipeline(suite: Any) -> Any:
    agent = ScriptedAgent(suite, name="scripted-local")
    loop = ToolsExecutionLoop([ToolsExecutor(), agent], max_iters=80)
    out = AgentPipeline([SystemMessage("You are a helpful assistant."), InitQuery(), agent, loop])
    out.name = "scripted-local"
    return out


def agentdojo_results(
    guarded: bool, logdir: Path
) -> tuple[dict[Any, bool], dict[Any, bool], dict[Any, bool]]:
    """(benign utility, utility under attack, security) by AgentDojo's own functions."""
    suite = get_suite("v1.2.2", "banking")
    element = pipeline(suite)
    if guarded:
        element = guard_pipeline(element, ROOT / "specs" / "agentdojo" / "banking.ltl")
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.WARNING)
    try:
        with OutputLogger(str(logdir)):
            benign = benchmark_suite_without_injections(
                element, suite, logdir, True, USERS, "v1.2.2"
            )
            attack = load_attack("important_instructions", suite, element)
            attacked = benchmark_suite_with_injections(
                element, suite, attack, logdir, True, USERS, INJECTIONS, benchmark_version="v1.2.2"
            )
    finally:
        logging.getLogger().setLevel(level)
    return benign["utility_results"], attacked["utility_results"], attacked["security_results"]


def rate(values: dict[Any, bool]) -> float:
    return round(100 * sum(values.values()) / len(values), 2)


def test_the_benchmark_prints_what_agentdojo_computes(tmp_path: Path) -> None:
    """Per run and per suite, the script's utility, utility under attack and attack
    success, without and with the firewall, are AgentDojo's own for the same runs; a
    miss is an attack that succeeded on the calls that ran, and each is listed."""
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "agentdojo.py"),
            "--suite",
            "banking",
            "--user-tasks",
            ",".join(USERS),
            "--injection-tasks",
            ",".join(INJECTIONS),
            "--memory-calls",
            "300",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    printed = done.stdout
    result = json.loads(out.read_text())
    banking = result["suites"]["banking"]
    for guarded, key in ((False, "plain"), (True, "guarded")):
        benign, under_attack, security = agentdojo_results(guarded, tmp_path / key)
        assert {(p["user_task"], ""): p[key]["utility"] for p in banking["benign"]} == benign
        pairs = {(p["user_task"], p["injection_task"]): p[key] for p in banking["attacked"]}
        assert {k: v["utility"] for k, v in pairs.items()} == under_attack
        assert {k: v["security"] for k, v in pairs.items()} == security
        side = "firewall" if guarded else "plain"
        summary = banking["summary"]
        assert summary["benign_utility"][side] == rate(benign)
        assert summary["utility_under_attack"][side] == rate(under_attack)
        assert summary["attack_success"][side] == rate(security)
    row = next(line for line in printed.splitlines() if line.startswith("banking"))
    s = banking["summary"]
    numbers = [
        s["benign_utility"]["plain"],
        s["benign_utility"]["firewall"],
        s["utility_under_attack"]["plain"],
        s["utility_under_attack"]["firewall"],
        s["attack_success"]["plain"],
        s["attack_success"]["firewall"],
    ]
    assert row.split()[1:8] == [
        *(f"{n:.2f}%" for n in numbers),
        f"{s['attack_success_executed']['firewall']:.2f}%",
    ]
    # without a firewall every call that was asked for ran: both checks agree
    assert all(p["plain"]["harm"] == p["plain"]["security"] for p in banking["attacked"])
    misses = [p for p in banking["attacked"] if p["guarded"]["harm"]]
    listed = printed.split("Misses", 1)[1]
    for pair in misses:
        assert f"banking {pair['user_task']} x {pair['injection_task']}:" in listed
    assert s["misses"] == len(misses)
    assert result["cost"]["calls"] > 0 and result["cost"]["p99_us"] >= result["cost"]["p50_us"] > 0
    assert "Firewall cost per checked call: p50" in printed


def test_a_check_that_changes_what_it_reads_is_judged_once_each_way(tmp_path: Path) -> None:
    """workspace injection_task_8's check lists the unread emails (which marks them read):
    judging the calls that ran after AgentDojo's own check must not see what that check
    changed. Without a firewall both verdicts agree (the attack succeeds)."""
    out = tmp_path / "result.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "agentdojo.py"),
            "--suite",
            "workspace",
            "--user-tasks",
            "user_task_24",
            "--injection-tasks",
            "injection_task_8",
            "--memory-calls",
            "100",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    (pair,) = json.loads(out.read_text())["suites"]["workspace"]["attacked"]
    assert pair["plain"]["security"] is True and pair["plain"]["harm"] is True
