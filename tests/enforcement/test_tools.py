"""Tool declarations enforced by the firewall: schema, `from` dependencies, `requires`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall, FirewallConfigError
from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.severity import SeverityKind
from agentguard.tools.checker import ToolChecker, is_tool_check
from agentguard.tools.values import occurs_in
from agentguard.trace.model import Call

SPEC_TEXT = """
spec refunds
tool lookup_order(order_id: str)
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str from results(lookup_order.order_id), amount: number >= 0,
                  note?: str, tags?: list)
    requires O verify_identity
constraint cap severity TOLERATE := G !issue_refund(amount > 500)
"""


def spec() -> Spec:
    return parse_spec(SPEC_TEXT, source="refunds.ltl")


def firewall(**options: Any) -> Firewall:
    fw = Firewall(spec(), **{"keep_trace": True, **options})
    for name, args, result in (
        ("verify_identity", {"customer_id": "c1"}, "ok"),
        ("lookup_order", {"order_id": "A1"}, {"order_id": "A1", "total": 40}),
    ):
        assert fw.propose(name, args).action is Action.ALLOW
        fw.record(name, args, result)
    return fw


def only(fw: Firewall, name: str, args: dict[str, Any]) -> tuple[Action, str, str, str]:
    d = fw.propose(name, args)
    assert len(d.violations) == 1, d.violations
    v = d.violations[0]
    return d.action, v.constraint, v.detail, v.hint


def test_a_call_that_fits_its_declaration_is_allowed() -> None:
    """Declared tool, required arguments of the right types, value from a result: allowed."""
    fw = firewall()
    d = fw.propose("issue_refund", {"order_id": "A1", "amount": 40, "note": None})
    assert d.action is Action.ALLOW and not d.violations


def test_unknown_tool_is_blocked() -> None:
    """A tool the spec does not declare is a schema violation naming the declared tools."""
    action, name, detail, hint = only(firewall(), "delete_account", {})
    assert (action, name) == (Action.BLOCK, "tool:delete_account:schema")
    assert "unknown tool 'delete_account'" in detail and "lookup_order" in hint


def test_final_answer_is_implicitly_declared() -> None:
    """The firewall's final tools need no declaration."""
    assert firewall().propose("final_answer", {"answer": "done"}).action is Action.ALLOW


def test_missing_required_argument() -> None:
    """A missing argument is named with its expected type."""
    _, name, detail, hint = only(firewall(), "issue_refund", {"order_id": "A1"})
    assert name == "tool:issue_refund:schema"
    assert detail == "missing required argument 'amount' (a number)"
    assert hint.startswith("pass amount (a number)")


def test_unexpected_argument() -> None:
    """An argument the declaration does not list is refused."""
    _, _, detail, hint = only(firewall(), "lookup_order", {"order_id": "A1", "force": True})
    assert detail == "unexpected argument 'force'"
    assert "lookup_order(order_id: str)" in hint


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"order_id": 7, "amount": 1}, "argument 'order_id' must be a str, got int 7"),
        ({"order_id": "A1", "amount": "40"}, "argument 'amount' must be a number, got str '40'"),
        ({"order_id": "A1", "amount": True}, "argument 'amount' must be a number, got bool True"),
        ({"order_id": "A1", "amount": 1, "tags": "x"}, "argument 'tags' must be a list, got str"),
    ],
)
def test_wrong_type_names_the_argument_and_the_type(args: dict[str, Any], expected: str) -> None:
    """A mistyped argument: the message names it, the expected type and the value."""
    _, _, detail, _ = only(firewall(), "issue_refund", args)
    assert detail.startswith(expected)


def test_bound_violated() -> None:
    """amount: number >= 0 refuses a negative amount."""
    _, _, detail, hint = only(firewall(), "issue_refund", {"order_id": "A1", "amount": -5})
    assert detail == "argument 'amount' = -5 breaks its bound amount >= 0"
    assert hint == "pass amount >= 0"


def test_all_schema_problems_are_listed_in_one_violation() -> None:
    """Several schema problems are merged into the one synthetic constraint."""
    d = firewall().propose("issue_refund", {"order_id": 1, "amount": -1, "x": 0})
    assert [v.constraint for v in d.violations] == ["tool:issue_refund:schema"]
    assert d.violations[0].detail.count(";") == 2


def test_dependency_value_must_come_from_an_earlier_result() -> None:
    """order_id from results(lookup_order.order_id): an order never looked up is refused."""
    _, name, detail, hint = only(firewall(), "issue_refund", {"order_id": "B7", "amount": 1})
    assert name == "tool:issue_refund:dependency"
    assert "'B7' never appeared in an earlier result of lookup_order.order_id" in detail
    assert hint.startswith("call lookup_order first")


def test_dependency_needs_the_result_not_only_the_call() -> None:
    """A lookup still in flight (no result yet) does not supply the value."""
    fw = Firewall(spec(), keep_trace=True)
    fw.propose("verify_identity", {"customer_id": "c"})
    fw.record("verify_identity", {"customer_id": "c"}, "ok")
    assert fw.propose("lookup_order", {"order_id": "A1"}).executes
    d = fw.propose("issue_refund", {"order_id": "A1", "amount": 1})
    assert [v.constraint for v in d.violations] == ["tool:issue_refund:dependency"]


def test_requires_is_checked_on_the_prefix() -> None:
    """requires O verify_identity: refused before verification, with the monitor's hint."""
    fw = Firewall(spec(), keep_trace=True)
    fw.propose("lookup_order", {"order_id": "A1"})
    fw.record("lookup_order", {"order_id": "A1"}, {"order_id": "A1"})
    action, name, detail, hint = only(fw, "issue_refund", {"order_id": "A1", "amount": 1})
    assert (action, name) == (Action.BLOCK, "tool:issue_refund:requires")
    assert "(O verify_identity) does not hold" in detail
    assert hint == "call verify_identity before calling issue_refund"


def test_schema_severity_is_configurable() -> None:
    """schema_severity='HARD_STOP' stops the run on a malformed call."""
    fw = firewall(schema_severity="HARD_STOP")
    d = fw.propose("lookup_order", {})
    assert d.action is Action.STOP and fw.stopped
    assert d.violations[0].severity.kind is SeverityKind.HARD_STOP


def test_soft_block_on_schema_escalates_after_its_limit() -> None:
    """SOFT_BLOCK(1): the second malformed attempt on the same tool stops the run."""
    fw = firewall(schema_severity="SOFT_BLOCK(1)")
    assert fw.propose("lookup_order", {}).action is Action.BLOCK
    d = fw.propose("lookup_order", {"order_id": 3})
    assert d.action is Action.STOP and d.escalated


def test_tolerated_schema_problems_run_and_are_logged(tmp_path: Path) -> None:
    """TOLERATE: the call executes; the violation is on the decision and in the log."""
    log = tmp_path / "decisions.jsonl"
    fw = firewall(schema_severity="TOLERATE", log_path=log)
    d = fw.propose("lookup_order", {"order_id": 3})
    assert d.action is Action.ALLOW and d.violations[0].constraint == "tool:lookup_order:schema"
    fw.record("lookup_order", {"order_id": 3}, "found")
    fw.finish()
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events][-3:] == [
        "agentguard.decision",
        "agentguard.result",
        "agentguard.finish",
    ]
    assert events[-3]["constraint"] == "tool:lookup_order:schema"


def test_enforce_tools_false_turns_the_checks_off() -> None:
    """enforce_tools=False: only the spec's constraints are checked."""
    fw = firewall(enforce_tools=False)
    assert fw.propose("delete_account", {"x": 1}).action is Action.ALLOW


def test_tool_checks_do_not_enter_the_compliance_score() -> None:
    """A tolerated schema problem leaves the report at full compliance."""
    fw = firewall(schema_severity="TOLERATE")
    fw.propose("lookup_order", {"order_id": 3})
    fw.record("lookup_order", {"order_id": 3}, "ok")
    report = fw.finish()
    assert report.compliance.score == 1.0
    assert {r.name for r in report.compliance.constraints} == {"cap"}


def test_a_spec_without_tool_declarations_accepts_any_tool() -> None:
    """No declarations: no tool checks at all."""
    fw = Firewall(parse_spec("constraint c := F a"), keep_trace=True)
    assert fw.propose("anything", {"x": [1]}).action is Action.ALLOW


def test_invalid_schema_severity_is_a_config_error() -> None:
    """An unknown severity name is refused when the firewall is built."""
    with pytest.raises(FirewallConfigError):
        Firewall(spec(), schema_severity="LOUD", keep_trace=True)


def test_checker_names_and_occurrence() -> None:
    """Synthetic names are recognised; occurs_in finds values and keys inside JSON text."""
    assert is_tool_check("tool:issue_refund:requires") and not is_tool_check("tool_budget")
    assert occurs_in("A1", '{"orders": [{"id": "A1"}]}') and occurs_in("orders", {"orders": []})
    assert not occurs_in(1, [True])
    checker = ToolChecker(spec().tools)
    assert checker.check("lookup_order", {"order_id": "A1"}, [Call("x")]) == []


def test_dependencies_survive_save_and_restore() -> None:
    """A restored firewall still knows which values earlier results supplied."""
    fw = firewall()
    other = Firewall.restore(spec(), json.loads(json.dumps(fw.save())))
    assert other.propose("issue_refund", {"order_id": "A1", "amount": 1}).action is Action.ALLOW
    assert other.propose("issue_refund", {"order_id": "Z9", "amount": 1}).action is Action.BLOCK
