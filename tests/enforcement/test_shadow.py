"""Shadow mode: every decision computed and logged as enforced, nothing refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from smolagents import ToolCallingAgent, tool

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall, FirewallConfigError
from agentguard.guard import guard
from agentguard.language import parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.testing.smolagents_models import ScriptedModel, call
from agentguard.trace import load_traces

SPEC = """
spec shadowed
constraint identity_first severity SOFT_BLOCK(1)
    message "Verify first."
  := G(issue_refund -> O verify_identity)
constraint no_delete severity HARD_STOP
  := G !delete_account
constraint cap severity BLOCK_AND_WARN
  := G !issue_refund(amount > 500)
"""

SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("issue_refund", {"order_id": "A1", "amount": 40}),
    ("issue_refund", {"order_id": "A2", "amount": 40}),
    ("delete_account", {}),
    ("verify_identity", {"customer_id": "c1"}),
    ("issue_refund", {"order_id": "A3", "amount": 900}),
]


def run(mode: str, log: Path) -> tuple[Firewall, list[Any]]:
    fw = Firewall(parse_spec(SPEC), log_path=log, mode=mode, enforce_tools=False, keep_trace=True)
    decisions = []
    for name, args in SCRIPT:
        d = fw.propose(name, args)
        decisions.append(d)
        if d.executes:
            fw.complete(d, {"ok": True})
    return fw, decisions


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_shadow_decisions_are_the_enforced_ones_but_every_call_runs(tmp_path: Path) -> None:
    """Each call's decision matches enforce mode's on the same prefix, and every call runs."""
    fw, decisions = run("shadow", tmp_path / "s.jsonl")
    assert all(d.executes for d in decisions)
    assert [d.shadow for d in decisions] == [
        Action.BLOCK,
        Action.STOP,  # SOFT_BLOCK(1) escalates on the second attempt
        Action.STOP,
        None,
        Action.BLOCK,
    ]
    assert not fw.stopped
    assert [c.name for c in fw.trace] == [n for n, _ in SCRIPT]
    # enforce mode decides the first call identically, then stops where shadow would
    efw = Firewall(parse_spec(SPEC), mode="enforce", enforce_tools=False, keep_trace=True)
    first = efw.propose(*SCRIPT[0])
    assert first.action is decisions[0].shadow
    assert first.violations == decisions[0].violations


def test_shadow_log_says_what_enforce_would_do(tmp_path: Path) -> None:
    """Decision lines carry the enforced action and shadow: true; results are logged."""
    log = tmp_path / "s.jsonl"
    run("shadow", log)
    events = lines(log)
    decided = [e for e in events if e["event"] == "agentguard.decision"]
    assert [e["action"] for e in decided] == ["block", "stop", "stop", "allow", "block"]
    assert [e.get("shadow", False) for e in decided] == [True, True, True, False, True]
    assert sum(e["event"] == "agentguard.result" for e in events) == len(SCRIPT)


def test_shadow_report_lists_what_would_have_been_blocked(tmp_path: Path) -> None:
    """finish() names the would-be refusals and the first would-be stop."""
    log = tmp_path / "s.jsonl"
    fw, decisions = run("shadow", log)
    report = fw.finish()
    assert report.mode == "shadow"
    assert [d.step for d in report.would_block] == [0, 1, 2, 4]
    assert report.would_stop is decisions[1]
    assert report.blocked == ()
    data = report.to_dict()
    assert data["mode"] == "shadow"
    assert [d["shadow"] for d in data["would_block"]] == ["block", "stop", "stop", "block"]
    finish = lines(log)[-1]
    assert finish["event"] == "agentguard.finish"
    assert finish["shadow"] is True
    assert finish["would_block"] == [d.call_id for d in report.would_block]


def test_shadow_online_equals_offline(tmp_path: Path) -> None:
    """The report equals verify_trace of the log read back from disk."""
    log = tmp_path / "s.jsonl"
    fw, _ = run("shadow", log)
    report = fw.finish()
    (loaded,) = load_traces(log)
    trace = loaded.trace
    offline = verify_trace(trace, parse_spec(SPEC))
    assert offline.score == report.compliance.score
    assert [c.name for c in trace] == [n for n, _ in SCRIPT]


def test_shadow_late_hard_stop_does_not_stop(tmp_path: Path) -> None:
    """A HARD_STOP found on a result is logged as a would-be stop; the run goes on."""
    spec = parse_spec(
        "spec s\nconstraint ok severity HARD_STOP := G(lookup -> lookup(result.ok = true))"
    )
    log = tmp_path / "late.jsonl"
    fw = Firewall(spec, log_path=log, mode="shadow", keep_trace=True)
    d = fw.propose("lookup", {})
    late = fw.complete(d, {"ok": False})
    assert [v.constraint for v in late] == ["ok"]
    assert not fw.stopped
    assert fw.propose("other", {}).action is Action.ALLOW
    (event,) = [e for e in lines(log) if e["event"] == "agentguard.late_violation"]
    assert event["action"] == "stop"
    assert event["shadow"] is True


def test_enforce_mode_logs_no_shadow_field(tmp_path: Path) -> None:
    """Enforce mode is unchanged: no shadow field, refusals refuse."""
    log = tmp_path / "e.jsonl"
    _fw, decisions = run("enforce", log)
    assert decisions[0].action is Action.BLOCK
    assert all(d.shadow is None for d in decisions)
    assert not any("shadow" in e for e in lines(log))


def test_unknown_mode_is_a_config_error() -> None:
    """A misspelled mode is refused up front."""
    with pytest.raises(FirewallConfigError, match="mode must be one of"):
        Firewall(parse_spec(SPEC), mode="audit", keep_trace=True)


RAN: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def delete_account() -> str:
    """Delete the customer's account."""
    RAN.append("delete")
    return "deleted"


def test_guard_shadow_mode_runs_a_forbidden_call_in_smolagents() -> None:
    """guard(..., mode="shadow"): the HARD_STOP call really runs and the report lists it."""
    RAN.clear()
    model = ScriptedModel([call("delete_account"), call("final_answer", answer="done")])
    agent = guard(
        ToolCallingAgent(tools=[delete_account], model=model, verbosity_level=-1),
        parse_spec(SPEC),
        mode="shadow",
    )
    agent.run("delete it")
    assert RAN == ["delete"]
    report = agent.agentguard.report
    assert report is not None
    assert [d.tool for d in report.would_block] == ["delete_account"]
    assert [c.name for c in report.trace] == ["delete_account", "final_answer"]
