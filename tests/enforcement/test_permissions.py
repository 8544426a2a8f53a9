"""``Firewall.permissions`` on small real specs: each category, each severity, each mode."""

from __future__ import annotations

from agentguard.enforcement.approval import Approval, ApprovalRequest
from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall

SPEC = """
spec refunds
tool verify_identity(customer_id: str)
tool lookup_order(order_id: str)
tool issue_refund(order_id: str from results(lookup_order.order_id), amount: number)
tool approve()
constraint identity_first severity SOFT_BLOCK(2) message "Verify first." := G(issue_refund -> O verify_identity)
constraint small severity HARD_STOP := G(issue_refund(amount > 500) -> O approve)
constraint cite := F lookup_order
"""


def _ran(fw: Firewall, name: str, args: dict[str, object], result: object = "ok") -> None:
    d = fw.propose(name, args)
    assert d.executes, d.message
    fw.complete(d, result)


def test_refused_conditional_free_and_other() -> None:
    """Before anything ran: the refund is refused (identity, and no order looked up),
    the final answer is refused (``F lookup_order`` open), the rest is free; a tool the
    spec does not declare is refused."""
    answer = Firewall(SPEC).permissions()
    refund = answer["issue_refund"]
    assert refund.status == "refused" and refund.action is Action.BLOCK
    assert refund.constraints == ("identity_first", "tool:issue_refund:dependency")
    assert answer["final_answer"].status == "refused"
    assert answer.free == ("verify_identity", "lookup_order", "approve")
    assert answer["delete_everything"].status == "refused"
    assert answer.exact
    (obligation,) = answer.obligations
    assert obligation.constraint == "cite" and obligation.certain
    assert obligation.hint == "call lookup_order before finishing"


def test_conditions_after_the_prerequisites() -> None:
    """Once identity is verified and A1 looked up: the refund is allowed under
    ``amount <= 500`` (or after an approval) with order_id one of the ids seen."""
    fw = Firewall(SPEC)
    _ran(fw, "verify_identity", {"customer_id": "c"})
    _ran(fw, "lookup_order", {"order_id": "A1"}, {"order_id": "A1"})
    answer = fw.permissions()
    refund = answer["issue_refund"]
    assert refund.status == "conditional"
    (small,) = refund.conditions
    assert small.text == "!(amount > 500)" and small.exact
    assert refund.declaration is not None
    assert refund.declaration.one_of == (("order_id", ("A1",)),)
    assert answer.allows("issue_refund", {"order_id": "A1", "amount": 40})
    assert not answer.allows("issue_refund", {"order_id": "A1", "amount": 900})
    assert not answer.allows("issue_refund", {"order_id": "B7", "amount": 40})
    assert not answer.allows("issue_refund", {"order_id": "A1"})  # the declaration
    assert answer["final_answer"].status == "free"
    assert answer.obligations == ()


def test_a_soft_block_at_its_limit_stops() -> None:
    """SOFT_BLOCK(2) after two blocked attempts: the next call stops the run."""
    fw = Firewall(SPEC, enforce_tools=False)
    for _ in range(2):
        assert fw.propose("issue_refund", {"order_id": "A1", "amount": 1}).action is Action.BLOCK
    refund = fw.permissions()["issue_refund"]
    assert refund.status == "refused" and refund.action is Action.STOP


def test_ask_needs_approval_with_an_approver_and_falls_back_without() -> None:
    """ASK with an approver: needs approval; without: its fallback (SOFT_BLOCK) refuses."""
    spec = "spec s\nconstraint human severity ASK := G !wire"

    def approver(request: ApprovalRequest) -> Approval:
        return Approval(False, by="alice")

    assert Firewall(spec, approver=approver).permissions()["wire"].status == "needs_approval"
    assert Firewall(spec).permissions()["wire"].status == "refused"
    tolerant = Firewall(spec, ask_fallback="TOLERATE").permissions()
    assert tolerant["wire"].status == "free"


def test_tolerate_never_refuses() -> None:
    """A TOLERATE constraint's violations run: the tool is free."""
    answer = Firewall("spec s\nconstraint t severity TOLERATE := G !wire").permissions()
    assert answer["wire"].status == "free"


def test_block_and_warn_retry_is_labelled() -> None:
    """After a BLOCK_AND_WARN warning, repeating the warned call would run: the tool is
    not listed as refused, and the entry says why it is not exact."""
    fw = Firewall("spec s\nconstraint w severity BLOCK_AND_WARN := G !wire")
    assert fw.permissions()["wire"].status == "refused"
    fw.propose("wire", {"to": "x"})
    entry = fw.permissions()["wire"]
    assert entry.status == "conditional" and not entry.exact
    assert "BLOCK_AND_WARN" in entry.reason
    assert fw.propose("wire", {"to": "x"}).action is Action.OVERRIDE


def test_shadow_mode_says_what_enforce_mode_would_do() -> None:
    """Shadow mode: the same answer as enforce mode, marked shadow."""
    answer = Firewall(SPEC, mode="shadow").permissions()
    assert answer.mode == "shadow"
    assert answer["issue_refund"].status == "refused"
    assert answer.describe().startswith("agentguard (shadow mode")


def test_a_stopped_run_refuses_everything() -> None:
    """After a STOP every tool is refused with STOP."""
    fw = Firewall("spec s\nconstraint h severity HARD_STOP := G !wire")
    assert fw.propose("wire").action is Action.STOP
    answer = fw.permissions(["read"])
    assert answer.stopped and answer["read"].action is Action.STOP
    assert answer.other.status == "refused"


def test_quantified_constraints_are_labelled_conservative() -> None:
    """A forall constraint on the tool: not analysed, labelled, never allowed by the
    answer; a tool it does not mention is free."""
    spec = "spec s\nconstraint q := forall o: G(refund(order_id = o) -> O lookup(order_id = o))"
    fw = Firewall(spec)
    entry = fw.permissions()["refund"]
    assert entry.status == "conditional" and not entry.exact
    assert "quantified" in entry.reason
    assert not fw.permissions().allows("refund", {"order_id": "A1"})
    assert fw.permissions()["other_tool"].status == "free"  # a call it cannot move


def test_the_answer_does_not_move_the_run() -> None:
    """Asking changes nothing: the next decisions and the log are as without asking."""
    fw = Firewall(SPEC, keep_trace=True)
    fw.permissions()
    fw.permissions(["other"])
    assert fw.decisions == () or list(fw.decisions) == []
    assert fw.propose("lookup_order", {"order_id": "A1"}).step == 0


def test_describe_reads_as_a_note_for_the_model() -> None:
    """The text lists refused tools, conditions, free tools and what to do before finishing."""
    fw = Firewall(SPEC)
    _ran(fw, "verify_identity", {"customer_id": "c"})
    text = fw.permissions().describe()
    assert (
        "- Refused now: issue_refund (tool:issue_refund:dependency); final_answer (cite)." in text
    )
    assert "- Allowed: verify_identity, lookup_order, approve." in text
    assert "- Before finishing: call lookup_order before finishing." in text
    assert "- Any other tool is refused." in text
