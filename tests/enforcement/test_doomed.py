"""A call that breaks no constraint can still doom their conjunction: the answer of
``Firewall.permissions`` marks such tools (``doomed``), and ``offer="narrow"`` does not
offer them."""

from __future__ import annotations

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.offering import offering
from agentguard.language import parse_spec

SPEC = """
constraint order severity SOFT_BLOCK := InOrder([a, b, b, d])
constraint one_d severity SOFT_BLOCK := CalledN(d, 1, =)
"""
TOOLS = ["a", "b", "d", "final_answer"]


def _after(spec_text: str, *calls: str) -> Firewall:
    fw = Firewall(parse_spec(spec_text), keep_trace=True)
    for name in calls:
        fw.complete(fw.start(fw.propose(name, {})), "ok")
    return fw


def test_an_early_call_that_uses_up_a_count_the_order_still_needs_is_doomed() -> None:
    fw = _after(SPEC, "a", "b")
    answer = fw.permissions(TOOLS)
    # d breaks neither constraint now: InOrder may still see a, b, b, d later, and d is
    # called once; but after it InOrder needs one more d, which one_d no longer admits
    assert answer["d"].status == "free"
    assert "one_d" in answer["d"].doomed and "order" in answer["d"].doomed
    assert answer.doomed == ("d",)
    assert "d" not in answer.offered and "b" in answer.offered
    assert answer.to_dict()["tools"][2]["doomed"] == answer["d"].doomed
    assert "no compliant run would follow: d (" in answer.describe()
    # (the final answer is refused too: both constraints are still open)
    assert offering(fw, TOOLS, "narrow").tools == ("a", "b")
    # the answer only informs: propose still runs the call
    assert fw.propose("d", {}).executes


def test_once_the_order_is_met_the_call_is_no_longer_doomed() -> None:
    fw = _after(SPEC, "a", "b", "b")
    assert fw.permissions(TOOLS)["d"].doomed == ""
    assert "d" in offering(fw, TOOLS, "narrow").tools


def test_a_run_doomed_already_dooms_no_call_in_particular() -> None:
    fw = _after(SPEC, "a", "d")  # d used up, InOrder still needs a later one
    assert fw.permissions(TOOLS).doomed == ()


def test_when_only_the_end_is_left_only_the_end_is_offered() -> None:
    spec = """
constraint answer_b severity SOFT_BLOCK := G(b -> F c)
constraint never_c severity SOFT_BLOCK := G !c
"""
    fw = _after(spec)
    answer = fw.permissions(["b", "c", "final_answer"])
    assert answer["c"].status == "refused"
    assert answer["b"].status == "free" and answer.doomed == ("b",)
    assert offering(fw, ["b", "c", "final_answer"], "narrow").tools == ("final_answer",)
    # an agent with no final-answer tool: every tool is refused or doomed, so the doomed
    # stay offered (what the model does next is its own; the answer says why)
    assert offering(fw, ["b", "c"], "narrow").tools == ("b",)
