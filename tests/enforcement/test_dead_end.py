"""A final answer is not sent back when nothing else could run before it.

With ``offer="narrow"`` the agent is told what may run; when every one of its tools is
refused for good, only the final answer is offered. Sending that answer back could only
repeat the refusal (no call can change the run first), so it ends the run with its
violations recorded. Refusals a repeat or an approval can lift (BLOCK_AND_WARN, ASK)
are no dead end; neither is a run that moved since the offer.
"""

from __future__ import annotations

from agentguard import verify_trace
from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.offering import offering
from agentguard.enforcement.policy import DEAD_END_NOTE
from agentguard.language import parse_spec

TOOLS = ["a", "b", "final_answer"]


def _spec(never_b: str = "SOFT_BLOCK") -> str:
    return f"""
constraint need_b severity SOFT_BLOCK := F b
constraint never_b severity {never_b} := G !b
constraint one_a severity SOFT_BLOCK := G(a -> X G !a)
"""


def _after_one_a(spec_text: str) -> Firewall:
    fw = Firewall(parse_spec(spec_text), keep_trace=True)
    fw.complete(fw.start(fw.propose("a", {})), "ok")
    return fw


def test_offered_only_the_end_the_final_answer_ends_the_run() -> None:
    fw = _after_one_a(_spec())
    offered = offering(fw, TOOLS, "narrow")
    assert offered.tools == ("final_answer",)
    decision = fw.propose("final_answer", {"answer": "done"})
    assert decision.executes and DEAD_END_NOTE in decision.message
    fw.complete(fw.start(decision), "done")
    report = fw.finish()
    failed = [c.name for c in report.compliance.constraints if not c.passed]
    assert failed == ["need_b"]
    assert report.compliance == verify_trace(report.trace, fw.spec)  # online = offline


def test_without_the_offer_the_final_answer_is_sent_back() -> None:
    fw = _after_one_a(_spec())
    assert fw.propose("final_answer", {"answer": "done"}).action is Action.BLOCK


def test_a_refusal_a_repeat_can_lift_is_no_dead_end() -> None:
    fw = _after_one_a(_spec(never_b="BLOCK_AND_WARN"))
    offering(fw, TOOLS, "narrow")
    assert fw.propose("final_answer", {"answer": "done"}).action is Action.BLOCK


def test_the_offer_holds_only_where_it_was_made() -> None:
    """A tool still allowed at the offer: nothing marked; a call that ran since: the
    mark is for another position."""
    fw = Firewall(parse_spec(_spec()), keep_trace=True)
    assert offering(fw, TOOLS, "narrow").tools == ("a",)  # the answer waits: b is owed
    assert not fw.offered_only_the_end(fw.permissions(TOOLS), TOOLS)
    assert fw.propose("final_answer", {"answer": "x"}).action is Action.BLOCK
    fw.complete(fw.start(fw.propose("a", {})), "ok")
    answer = fw.permissions(TOOLS)
    other = Firewall(parse_spec(_spec()), keep_trace=True)
    assert not other.offered_only_the_end(answer, TOOLS)  # an answer of another prefix
