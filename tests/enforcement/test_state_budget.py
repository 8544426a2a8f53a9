"""A constraint past the monitor's state budget is logged, and on_budget chooses the effect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall, FirewallConfigError
from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.monitor import machine
from agentguard.monitor.compiled import clear_cache

# after `z` the obligation `G !a & F a` is unsatisfiable: only exploration shows it
SPEC = """
constraint blind
    severity HARD_STOP
  := G(z -> (G !a & F a))
"""


def spec() -> Spec:
    return parse_spec(SPEC)


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A state budget of 2 on machines compiled for this test only."""
    clear_cache()
    monkeypatch.setattr(machine, "MAX_EXPLORE", 2)
    yield
    clear_cache()


def events(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_within_the_budget_the_call_is_stopped() -> None:
    """The exact monitor refutes `z` before it runs."""
    clear_cache()
    assert Firewall(spec()).propose("z").action is Action.STOP


@pytest.mark.usefixtures("small_budget")
def test_past_the_budget_warn_allows_and_logs_once(tmp_path: Path) -> None:
    """on_budget="warn": the late call is allowed, and one agentguard.budget event names it."""
    log = tmp_path / "log.jsonl"
    fw = Firewall(spec(), log_path=log)
    assert fw.propose("z").action is Action.ALLOW
    fw.record("z", {}, None)
    assert fw.propose("b").action is Action.ALLOW
    budget = [e for e in events(log) if e["event"] == "agentguard.budget"]
    assert len(budget) == 1
    assert budget[0]["constraint"] == "blind"
    assert "state budget" in str(budget[0]["message"])


@pytest.mark.usefixtures("small_budget")
def test_past_the_budget_stop_stops_the_run(tmp_path: Path) -> None:
    """on_budget="stop": a call the over-budget constraint cannot decide stops the run."""
    log = tmp_path / "log.jsonl"
    fw = Firewall(spec(), log_path=log, on_budget="stop")
    decision = fw.propose("z")
    assert decision.action is Action.STOP
    assert "state budget" in decision.message
    assert fw.stopped
    assert [e["event"] for e in events(log)].count("agentguard.budget") == 1


def test_on_budget_is_checked() -> None:
    """An unknown on_budget policy is a configuration error."""
    with pytest.raises(FirewallConfigError, match="on_budget"):
        Firewall(spec(), on_budget="ignore")
