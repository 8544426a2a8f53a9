"""The firewall: the four severities of AgentLTL A.5.3, the end of a run, results, batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall, FirewallConfigError, FirewallStateError
from agentguard.enforcement.log import FIELDS
from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.monitor import Verdict
from agentguard.scoring.verify import verify_trace
from agentguard.semantics.registry import Registry
from agentguard.severity import SeverityKind

SPEC_TEXT = """
spec refunds
tool lookup_order(order_id: str)
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str, amount: number)
tool delete_account()
tool search(q: str)
tool cite()
tool note()
constraint identity_first layer L3 weight 4 severity SOFT_BLOCK(2)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)
constraint cap severity BLOCK_AND_WARN
    message "Refunds above 500 need a second look."
  := G !issue_refund(amount > 500)
constraint never_delete severity HARD_STOP
    message "Accounts are never deleted by the agent."
  := G !delete_account
constraint few_notes severity TOLERATE message "Keep notes short." := CalledN(note, 1, <=)
constraint cited severity SOFT_BLOCK(5) message "Cite a source before answering." := F cite
constraint no_empty_search severity HARD_STOP := G !search(result.count = 0)
"""


def spec() -> Spec:
    return parse_spec(SPEC_TEXT, source="refunds.ltl")


def run(fw: Firewall, name: str, args: dict[str, Any] | None = None, result: Any = "ok") -> Action:
    d = fw.propose(name, args or {})
    if d.executes:
        fw.record(name, args or {}, result)
    return d.action


def test_hard_stop_stops_the_run() -> None:
    """HARD_STOP: not executed, the run stops, later proposals are stopped too."""
    fw = Firewall(spec(), keep_trace=True)
    d = fw.propose("delete_account", {})
    assert d.action is Action.STOP and not d.executes
    assert fw.stopped
    assert fw.propose("lookup_order", {"order_id": "A"}).action is Action.STOP
    assert fw.trace.names == ()


def test_soft_block_escalates_after_n_blocked_attempts() -> None:
    """SOFT_BLOCK(2): two blocks, then the third attempt becomes a STOP."""
    fw = Firewall(spec(), keep_trace=True)
    refund = {"order_id": "A", "amount": 5}
    first, second, third = (fw.propose("issue_refund", refund) for _ in range(3))
    assert (first.action, second.action) == (Action.BLOCK, Action.BLOCK)
    assert third.action is Action.STOP and third.escalated
    assert fw.stopped


def test_soft_block_without_a_limit_uses_the_firewall_default() -> None:
    """A plain SOFT_BLOCK escalates after soft_block_limit blocks."""
    s = parse_spec("spec s\ntool a()\nconstraint c severity SOFT_BLOCK := G !a")
    fw = Firewall(s, soft_block_limit=1, keep_trace=True)
    assert fw.propose("a", {}).action is Action.BLOCK
    assert fw.propose("a", {}).action is Action.STOP


def test_block_and_warn_identical_retry_overrides() -> None:
    """BLOCK_AND_WARN: the very next identical call executes as an override."""
    fw = Firewall(spec(), keep_trace=True)
    run(fw, "verify_identity", {"customer_id": "c"})
    big = {"order_id": "A", "amount": 900}
    d = fw.propose("issue_refund", big)
    assert d.action is Action.BLOCK and "repeat exactly the same call" in d.message
    assert fw.propose("issue_refund", big).action is Action.OVERRIDE


def test_block_and_warn_different_retry_moves_the_insistence_pointer() -> None:
    """A different retry is warned again; then only that new call overrides."""
    fw = Firewall(spec(), keep_trace=True)
    run(fw, "verify_identity", {"customer_id": "c"})
    a, b = {"order_id": "A", "amount": 900}, {"order_id": "A", "amount": 800}
    assert fw.propose("issue_refund", a).action is Action.BLOCK
    assert fw.propose("issue_refund", b).action is Action.BLOCK
    assert fw.propose("issue_refund", a).action is Action.BLOCK
    assert fw.propose("issue_refund", a).action is Action.OVERRIDE


def test_block_and_warn_needs_the_very_next_call() -> None:
    """An unrelated call in between cancels the override."""
    fw = Firewall(spec(), keep_trace=True)
    run(fw, "verify_identity", {"customer_id": "c"})
    big = {"order_id": "A", "amount": 900}
    assert fw.propose("issue_refund", big).action is Action.BLOCK
    run(fw, "lookup_order", {"order_id": "A"})
    assert fw.propose("issue_refund", big).action is Action.BLOCK


def test_tolerate_logs_and_executes() -> None:
    """TOLERATE: the call runs, the violation is on the decision."""
    fw = Firewall(spec(), keep_trace=True)
    run(fw, "note")
    d = fw.propose("note", {})
    assert d.action is Action.ALLOW
    assert [v.constraint for v in d.violations] == ["few_notes"]


def test_strongest_action_wins_and_the_message_lists_all() -> None:
    """A refund violating SOFT_BLOCK and BLOCK_AND_WARN is blocked, naming both, with a hint."""
    fw = Firewall(spec(), keep_trace=True)
    d = fw.propose("issue_refund", {"order_id": "A", "amount": 900})
    assert d.action is Action.BLOCK
    assert [v.constraint for v in d.violations] == ["identity_first", "cap"]
    assert "Verify the customer's identity" in d.message and "second look" in d.message
    assert d.violations[0].hint == "call verify_identity before calling issue_refund"
    assert "repeat exactly" not in d.message  # the SOFT_BLOCK cannot be overridden
    assert "cited" in d.pending


def test_finishing_with_a_pending_obligation_is_sent_back_with_a_hint() -> None:
    """The final answer is checked as if the run ended: F cite fires on it."""
    fw = Firewall(spec(), keep_trace=True)
    d = fw.propose("final_answer", {"answer": 1})
    assert d.action is Action.BLOCK
    assert [v.constraint for v in d.violations] == ["cited"]
    assert "call cite before finishing" in d.message
    run(fw, "cite")
    assert fw.propose("final_answer", {"answer": 1}).action is Action.ALLOW


def test_finish_send_backs_are_bounded() -> None:
    """After max_finish_sendbacks blocked final answers, the answer goes through (non-compliant)."""
    fw = Firewall(spec(), max_finish_sendbacks=2, keep_trace=True)
    actions = [fw.propose("final_answer", {"answer": i}).action for i in range(3)]
    assert actions == [Action.BLOCK, Action.BLOCK, Action.ALLOW]
    fw.record("final_answer", {"answer": 2}, 2)
    report = fw.finish()
    assert report.verdicts["cited"] is Verdict.VIOLATED
    assert report.compliance.score < 1


def test_violation_found_when_the_result_arrives_stops_a_hard_stop_run(tmp_path: Path) -> None:
    """A result test decides only at record time; a HARD_STOP then stops the run (log flushed)."""
    log = tmp_path / "log.jsonl"
    fw = Firewall(spec(), log_path=log, keep_trace=True)
    assert fw.propose("search", {"q": "x"}).action is Action.ALLOW
    late = fw.record("search", {"q": "x"}, {"count": 0})
    assert [v.constraint for v in late] == ["no_empty_search"]
    assert fw.stopped
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert events[-1]["event"] == "agentguard.late_violation"
    assert events[-1]["action"] == "stop"


def test_batch_calls_are_checked_in_order_against_the_earlier_ones() -> None:
    """propose_batch: each call sees the earlier allowed calls of the batch."""
    fw = Firewall(spec(), keep_trace=True)
    ds = fw.propose_batch(
        [
            ("verify_identity", {"customer_id": "c"}),
            ("issue_refund", {"order_id": "A", "amount": 5}),
        ]
    )
    assert [d.action for d in ds] == [Action.ALLOW, Action.ALLOW]
    fw2 = Firewall(spec(), keep_trace=True)
    ds = fw2.propose_batch(
        [
            ("issue_refund", {"order_id": "A", "amount": 5}),
            ("verify_identity", {"customer_id": "c"}),
        ]
    )
    assert [d.action for d in ds] == [Action.BLOCK, Action.ALLOW]


@pytest.mark.parametrize(
    ("policy", "action"), [("fail_closed", Action.BLOCK), ("fail_open", Action.ALLOW)]
)
def test_user_predicate_errors_follow_the_policy(policy: str, action: Action) -> None:
    """A predicate that raises blocks (fail-closed) or lets the call run (fail-open), never crashes."""
    reg = Registry()

    def flaky(x: object) -> bool:
        raise ValueError("backend down")

    reg.register_predicate("flaky", flaky)
    s = parse_spec(
        "spec p\ntool t(i: int)\nconstraint c := forall x in args(t.i): flaky(x)", registry=reg
    )
    with capture_logs() as logs:
        fw = Firewall(
            s,
            registry=reg,
            on_predicate_error=policy,
            logger=structlog.get_logger(),
            keep_trace=True,
        )
        d = fw.propose("t", {"i": 1})
    assert d.action is action
    if policy == "fail_open":
        assert any(e["event"] == "agentguard.predicate_error" for e in logs)
    else:
        assert "backend down" in d.message


def test_decision_log_has_stable_fields_and_redacts_args(tmp_path: Path) -> None:
    """Every decision is one JSON line with the documented fields; args pass the redactor."""
    log = tmp_path / "log.jsonl"
    fw = Firewall(
        spec(),
        log_path=log,
        run_id="r1",
        redact=lambda tool, args: dict.fromkeys(args, "***"),
        keep_trace=True,
    )
    fw.propose("issue_refund", {"order_id": "A", "amount": 5})
    fw.propose("delete_account", {})
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert set(FIELDS) <= set(line)
        assert line["run_id"] == "r1" and line["spec"] == "refunds" and line["spec_hash"]
    assert lines[0]["args"] == {"order_id": "***", "amount": "***"}
    assert (
        lines[0]["constraint"],
        lines[0]["severity"],
        lines[0]["layer"],
        lines[0]["weight"],
    ) == (
        "identity_first",
        "SOFT_BLOCK(2)",
        "L3",
        4.0,
    )
    assert lines[1]["action"] == "stop"


def test_decisions_go_to_the_users_structlog_logger() -> None:
    """With logger=..., every decision is an event in the user's pipeline."""
    with capture_logs() as logs:
        fw = Firewall(spec(), logger=structlog.get_logger(), keep_trace=True)
        fw.propose("lookup_order", {"order_id": "A"})
        fw.propose("delete_account", {})
    assert [(e["event"], e["action"]) for e in logs] == [
        ("agentguard.decision", "allow"),
        ("agentguard.decision", "stop"),
    ]
    assert logs[1]["log_level"] == "warning"


def test_finish_reports_compliance_and_history() -> None:
    """finish(): compliance of the executed trace, the monitor's final verdicts, every decision."""
    fw = Firewall(spec(), keep_trace=True)
    run(fw, "issue_refund", {"order_id": "A", "amount": 5})
    run(fw, "verify_identity", {"customer_id": "c"})
    run(fw, "issue_refund", {"order_id": "A", "amount": 5})
    run(fw, "cite")
    assert run(fw, "final_answer", {"answer": "done"}) is Action.ALLOW
    report = fw.finish()
    assert report.compliance.score == 1.0
    assert all(v is Verdict.SATISFIED for v in report.verdicts.values())
    assert [d.action for d in report.decisions] == [Action.BLOCK] + [Action.ALLOW] * 4
    assert report.attempts == report.decisions
    assert report.trace.names == ("verify_identity", "issue_refund", "cite", "final_answer")
    assert report.to_dict()["compliance"]["compliance_score"] == 1.0
    passed = {c.name: c.passed for c in report.compliance.constraints}
    assert passed == {k: v is Verdict.SATISFIED for k, v in report.verdicts.items()}


def test_state_round_trip_continues_identically(tmp_path: Path) -> None:
    """A firewall restored from its JSON state makes the same decisions as the original."""
    script: list[tuple[str, dict[str, Any]]] = [
        ("issue_refund", {"order_id": "A", "amount": 900}),
        ("verify_identity", {"customer_id": "c"}),
        ("issue_refund", {"order_id": "A", "amount": 900}),
        ("issue_refund", {"order_id": "A", "amount": 900}),
        ("note", {}),
        ("note", {}),
        ("final_answer", {"answer": 1}),
        ("cite", {}),
        ("final_answer", {"answer": 1}),
    ]
    for cut in range(len(script) + 1):
        fw = Firewall(spec(), keep_trace=True)
        for name, args in script[:cut]:
            run(fw, name, args)
        doc = json.loads(json.dumps(fw.save()))
        other = Firewall.restore(spec(), doc)
        for name, args in script[cut:]:
            assert run(other, name, args) is run(fw, name, args)
        assert other.finish().compliance.score == fw.finish().compliance.score


def test_restore_refuses_another_spec() -> None:
    """A saved state only restores onto the same spec."""
    doc = Firewall(spec(), keep_trace=True).save()
    other = parse_spec("spec o\ntool a()\nconstraint c := F a")
    with pytest.raises(FirewallStateError):
        Firewall.restore(other, doc)


def test_spec_can_be_a_path(tmp_path: Path) -> None:
    """Firewall(path) loads the .ltl file."""
    p = tmp_path / "refunds.ltl"
    p.write_text(SPEC_TEXT, encoding="utf-8")
    fw = Firewall(p, keep_trace=True)
    assert fw.propose("delete_account", {}).action is Action.STOP
    kinds = {n: str(c) for n, c in fw.classification().items()}
    assert kinds["never_delete"] == "safety" and kinds["cited"] == "liveness"


def test_bad_options_are_refused() -> None:
    """on_predicate_error accepts only the two policies."""
    with pytest.raises(FirewallConfigError):
        Firewall(spec(), on_predicate_error="maybe", keep_trace=True)


def test_severity_kinds_are_reported_on_violations() -> None:
    """Violations carry their constraint's severity, layer and weight."""
    d = Firewall(spec(), keep_trace=True).propose("delete_account", {})
    v = d.violations[0]
    assert (v.severity.kind, v.weight, v.message) == (
        SeverityKind.HARD_STOP,
        1.0,
        "Accounts are never deleted by the agent.",
    )


def test_a_failing_result_matcher_is_a_predicate_error_not_a_crash(tmp_path: Path) -> None:
    """A user matcher that raises while a result is checked follows on_predicate_error."""
    reg = Registry()

    def matcher(result: object, expected: object) -> bool:
        raise RuntimeError("matcher broke")

    reg.set_matcher(matcher)
    s = parse_spec("spec m\ntool t()\nconstraint c := G !CalledWithResult(t, 1, {})")
    fw = Firewall(s, registry=reg, on_predicate_error="fail_open", keep_trace=True)
    assert fw.propose("t", {}).action is Action.ALLOW
    late = fw.record("t", {}, 1)
    assert [v.constraint for v in late] == ["c"]
    assert "matcher broke" in late[0].detail


@pytest.mark.parametrize("args", [[1, 2], '{"order_id": "A1"}', 7, [("order_id",)]])
def test_arguments_that_are_no_mapping_are_refused_plainly(args: Any, tmp_path: Path) -> None:
    """propose, propose_batch and record name the tool and the type when the arguments
    are no mapping (a list, JSON text), and nothing of the turn is left to run."""
    from agentguard import CallArgumentsError

    fw = Firewall(parse_spec(SPEC_TEXT), log_path=tmp_path / "log.jsonl")
    with pytest.raises(CallArgumentsError, match="'lookup_order' call must be a mapping"):
        fw.propose("lookup_order", args)
    with pytest.raises(CallArgumentsError, match="lookup_order"):
        fw.propose_batch([("search", {"q": "x"}, "c1"), ("lookup_order", args, "c2")])
    with pytest.raises(CallArgumentsError, match="lookup_order"):
        fw.record("lookup_order", args, "ok")
    report = fw.finish()
    assert report.trace.calls == ()
    events = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    withdrawn = [e for e in events if e["event"] == "agentguard.withdrawn"]
    assert [e["tool"] for e in withdrawn] == ["search"]
    assert "had bad arguments" in withdrawn[0]["message"]
    if isinstance(args, str):
        with pytest.raises(CallArgumentsError, match=r"json\.loads"):
            Firewall(parse_spec(SPEC_TEXT)).propose("search", args)


@pytest.mark.parametrize("formula", ["G(add -> boom(1))", "G(boom(1))", "boom(2) | F add"])
@pytest.mark.parametrize(
    ("policy", "severity", "action"),
    [
        ("fail_closed", "HARD_STOP", Action.STOP),
        ("fail_closed", "SOFT_BLOCK(2)", Action.BLOCK),
        ("fail_open", "HARD_STOP", Action.ALLOW),
    ],
)
def test_a_predicate_failing_on_constants_follows_the_policy_at_the_first_call(
    formula: str, policy: str, severity: str, action: Action, tmp_path: Path
) -> None:
    """A user predicate whose arguments are constants is evaluated when the run starts;
    if it raises, the constraint is violated from the start (as offline), and the first
    call proposed gets the policy, as an error raised by that call would: refused with
    the constraint's severity under fail_closed, allowed and logged once under fail_open."""
    reg = Registry()

    def boom(x: object) -> bool:
        raise ZeroDivisionError("division by zero")

    reg.register_predicate("boom", boom)
    text = f"predicate boom(x)\ntool add(n: number)\nconstraint b severity {severity} := {formula}"
    s = parse_spec(text, registry=reg)
    log = tmp_path / "log.jsonl"
    fw = Firewall(s, registry=reg, on_predicate_error=policy, log_path=log, keep_trace=True)
    d = fw.propose("add", {"n": 1})
    assert d.action is action
    if action is not Action.ALLOW:
        assert [v.constraint for v in d.violations] == ["b"]
        assert "a user predicate failed (fail-closed)" in d.message
        assert "division by zero" in d.message
    else:  # the call ran: the constraint is violated now (a late violation), not logged again
        fw.record("add", {"n": 1}, "ok")
        fw.propose("add", {"n": 2})
    report = fw.finish()
    events = [json.loads(line) for line in log.read_text().splitlines()]
    errors = [e for e in events if e["event"] == "agentguard.predicate_error"]
    assert len(errors) == (1 if policy == "fail_open" else 0)
    # online = offline: a refused first call leaves the empty trace (on which `G ...`
    # never evaluates the predicate), calls that ran make the constraint violated
    assert report.compliance == verify_trace(report.trace, s, registry=reg)
    assert dict(report.verdicts) == {
        c.name: Verdict.SATISFIED if c.passed else Verdict.VIOLATED
        for c in report.compliance.constraints
    }
    if policy == "fail_open":
        assert report.compliance.score == 0.0
