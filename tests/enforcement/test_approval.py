"""The ASK severity: the pure policy, the firewall's approver (sync and async), fallback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from smolagents import ToolCallingAgent, tool

from agentguard.enforcement.approval import Approval, ApprovalError, ApprovalRequest
from agentguard.enforcement.decision import Action, Violation
from agentguard.enforcement.firewall import Firewall, FirewallConfigError
from agentguard.enforcement.policy import Counts, Limits, judge
from agentguard.guard import guard
from agentguard.language import parse_spec
from agentguard.severity import Severity, SeverityKind
from agentguard.testing.smolagents_models import ScriptedModel, call, if_observed

SPEC = parse_spec(
    "spec approvals\n"
    "constraint big_refund severity ASK\n"
    '    message "Refunds above 500 need a human."\n'
    "  := G !issue_refund(amount > 500)\n"
    "constraint no_delete severity HARD_STOP := G !delete_account\n"
)
ASK = Severity(SeverityKind.ASK)
NO_COUNTS = Counts({})


def v(name: str, severity: Severity) -> Violation:
    return Violation(name, severity)


class TestPolicy:
    def test_ask_with_an_approver_holds_the_call(self) -> None:
        """The only refusing violation is ASK: the outcome asks, naming the constraint."""
        out = judge([v("a", ASK)], counts=NO_COUNTS, limits=Limits(), approver=True)
        assert (out.action, out.ask) == (Action.BLOCK, ("a",))

    def test_approved_runs_as_an_override_denied_blocks(self) -> None:
        """approval=True: OVERRIDE; approval=False: BLOCK with denied."""
        yes = judge([v("a", ASK)], counts=NO_COUNTS, limits=Limits(), approver=True, approval=True)
        no = judge([v("a", ASK)], counts=NO_COUNTS, limits=Limits(), approver=True, approval=False)
        assert (yes.action, yes.ask) == (Action.OVERRIDE, ())
        assert (no.action, no.denied) == (Action.BLOCK, True)

    def test_a_stronger_refusal_wins_without_asking(self) -> None:
        """A HARD_STOP or a block fired by the same call decides; nobody is asked."""
        stop = judge(
            [v("a", ASK), v("b", Severity(SeverityKind.HARD_STOP))],
            counts=NO_COUNTS,
            limits=Limits(),
            approver=True,
        )
        block = judge(
            [v("a", ASK), v("b", Severity(SeverityKind.SOFT_BLOCK))],
            counts=NO_COUNTS,
            limits=Limits(),
            approver=True,
        )
        assert (stop.action, stop.ask) == (Action.STOP, ())
        assert (block.action, block.ask, block.counted) == (Action.BLOCK, (), ("b",))

    @pytest.mark.parametrize(
        ("fallback", "action"),
        [
            (Severity(SeverityKind.SOFT_BLOCK), Action.BLOCK),
            (Severity(SeverityKind.HARD_STOP), Action.STOP),
            (Severity(SeverityKind.TOLERATE), Action.ALLOW),
        ],
    )
    def test_without_an_approver_ask_is_the_fallback(
        self, fallback: Severity, action: Action
    ) -> None:
        """No approver: ASK acts as Limits.ask_fallback (SOFT_BLOCK counts it)."""
        out = judge([v("a", ASK)], counts=NO_COUNTS, limits=Limits(ask_fallback=fallback))
        assert (out.action, out.ask) == (action, ())
        if fallback.kind is SeverityKind.SOFT_BLOCK:
            assert out.counted == ("a",)

    def test_fallback_soft_block_escalates(self) -> None:
        """The SOFT_BLOCK fallback escalates after the firewall's limit."""
        out = judge([v("a", ASK)], counts=Counts({"a": 3}), limits=Limits(soft_block=3))
        assert (out.action, out.escalated) == (Action.STOP, True)


def test_approved_call_runs_and_the_log_says_by_whom(tmp_path: Path) -> None:
    """A sync approver approves: OVERRIDE, in the trace, logged with by/at/reason."""
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(True, by="alice", reason="known customer")

    log = tmp_path / "d.jsonl"
    fw = Firewall(SPEC, approver=approver, log_path=log, keep_trace=True)
    d = fw.propose("issue_refund", {"amount": 900})
    assert d.action is Action.OVERRIDE and d.executes
    assert d.approval is not None and d.approval["by"] == "alice"
    assert "Approved by alice at" in d.message
    (request,) = asked
    assert request.tool == "issue_refund" and request.call_id == d.call_id
    assert [x.constraint for x in request.violations] == ["big_refund"]
    fw.complete(d, "ok")
    assert fw.trace.names == ("issue_refund",)
    (line,) = [json.loads(x) for x in log.read_text().splitlines() if "decision" in x]
    assert line["action"] == "allow_override"
    assert line["approval"]["approved"] is True and line["approval"]["by"] == "alice"
    assert line["approval"]["reason"] == "known customer" and line["approval"]["at"]


def test_denied_call_is_refused_with_the_reason() -> None:
    """A denial blocks the call; the model's message carries the approver's reason."""
    fw = Firewall(
        SPEC,
        approver=lambda r: {"approved": False, "by": "bob", "reason": "too much"},
        keep_trace=True,
    )
    d = fw.propose("issue_refund", {"amount": 900})
    assert d.action is Action.BLOCK and not d.executes
    assert "Denied by bob" in d.message and "too much" in d.message
    assert fw.trace.names == ()


def test_async_approver_inside_and_outside_an_event_loop() -> None:
    """An async approver is awaited, from plain code and from a running event loop."""

    async def approver(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return True

    fw = Firewall(SPEC, approver=approver, keep_trace=True)
    first = fw.propose("issue_refund", {"amount": 900})
    assert first.action is Action.OVERRIDE
    fw.complete(first, "ok")  # an approval covers one call: the next one is asked again

    async def inside() -> Action:
        return fw.propose("issue_refund", {"amount": 901}).action

    assert asyncio.run(inside()) is Action.OVERRIDE


def test_no_ask_when_nothing_is_violated_or_a_stop_fires() -> None:
    """The approver is not called for clean calls or calls a HARD_STOP refuses."""
    calls: list[str] = []

    def approver(request: ApprovalRequest) -> bool:
        calls.append(request.tool)
        return True

    fw = Firewall(SPEC, approver=approver, keep_trace=True)
    assert fw.propose("issue_refund", {"amount": 10}).action is Action.ALLOW
    assert fw.propose("delete_account", {}).action is Action.STOP
    assert calls == []


def test_without_an_approver_ask_falls_back() -> None:
    """No approver: SOFT_BLOCK by default, or the configured ask_fallback."""
    assert (
        Firewall(SPEC, keep_trace=True).propose("issue_refund", {"amount": 900}).action
        is Action.BLOCK
    )
    fw = Firewall(SPEC, ask_fallback="HARD_STOP", keep_trace=True)
    assert fw.propose("issue_refund", {"amount": 900}).action is Action.STOP
    with pytest.raises(FirewallConfigError, match="other than ASK"):
        Firewall(SPEC, ask_fallback="ASK", keep_trace=True)


def test_approver_errors_propagate_unchanged_and_bad_answers_are_named() -> None:
    """An exception from the approver is raised as is; a non-answer is an ApprovalError."""

    class Busy(Exception):
        pass

    def busy(request: ApprovalRequest) -> Any:
        raise Busy("nobody there")

    fw = Firewall(SPEC, approver=busy, keep_trace=True)
    with pytest.raises(Busy):
        fw.propose("issue_refund", {"amount": 900})
    assert fw.decisions == () and fw.propose("x", {}).step == 0  # nothing advanced
    with pytest.raises(ApprovalError, match="must answer"):
        Firewall(SPEC, approver=lambda r: "yes", keep_trace=True).propose(
            "issue_refund", {"amount": 900}
        )


def test_shadow_mode_does_not_ask() -> None:
    """Shadow mode records that enforce would ask, and asks nobody."""
    fw = Firewall(SPEC, mode="shadow", approver=lambda r: pytest.fail("asked"), keep_trace=True)
    d = fw.propose("issue_refund", {"amount": 900})
    assert d.executes and d.shadow is Action.BLOCK
    assert "would hold this call for approval" in d.message


RAN: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(amount: float) -> str:
    """Refund.

    Args:
        amount: How much.
    """
    RAN.append(f"refund {amount}")
    return "refunded"


def test_guard_passes_the_approver_to_smolagents_runs() -> None:
    """guard(..., approver=...): the approved call runs, the denied one gets the reason."""
    RAN.clear()
    answers = iter([Approval(True, by="alice"), Approval(False, by="alice", reason="no")])
    model = ScriptedModel(
        [
            call("issue_refund", amount=900),
            call("issue_refund", amount=901),
            if_observed("Denied by alice", call("final_answer", answer="denied"), None),
        ]
    )
    agent = guard(
        ToolCallingAgent(tools=[issue_refund], model=model, verbosity_level=-1),
        SPEC,
        approver=lambda r: next(answers),
    )
    assert agent.run("refund") == "denied"
    assert RAN == ["refund 900"]
    actions = [(d.action, d.tool) for d in agent.agentguard.attempts]
    assert actions[:2] == [(Action.OVERRIDE, "issue_refund"), (Action.BLOCK, "issue_refund")]
