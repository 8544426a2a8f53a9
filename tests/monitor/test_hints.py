"""Repair hints: the calls that would satisfy a constraint, with quantified values filled in."""

from __future__ import annotations

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.language import ast as A
from agentguard.language import parse_formula, parse_spec
from agentguard.monitor import Monitor
from agentguard.trace.model import Call

LOOKUP_FIRST = "forall o: G(issue_refund(order_id = o) -> O lookup_order(order_id = o))"


def monitor(text: str) -> Monitor:
    return Monitor([A.Constraint("c", parse_formula(text))])


def test_forall_hint_names_the_value_of_the_broken_instance() -> None:
    """A refund of an order never looked up: look up that very order first."""
    m = monitor(LOOKUP_FIRST)
    m.step(Call("lookup_order", {"order_id": "B2"}))
    hint = m.hint("c", Call("issue_refund", {"order_id": "A1"}))
    assert hint == 'call lookup_order(order_id = "A1") before calling issue_refund'


def test_forall_hint_at_the_end_names_the_open_obligation() -> None:
    """A file opened and never closed: close that file before finishing."""
    m = monitor("forall f: G(open(path = f) -> F close(path = f))")
    m.step(Call("open", {"path": "a.txt"}))
    m.step(Call("close", {"path": "a.txt"}))
    m.step(Call("open", {"path": "b.txt"}))
    hint = m.hint("c", Call("final_answer", {"answer": 1}), ending=True)
    assert hint == 'call close(path = "b.txt") before finishing'


def test_numbers_keep_their_literal_syntax() -> None:
    """An integer value is printed as an AgentLTL literal."""
    m = monitor("forall o: G(ship(id = o) -> O pay(id = o))")
    assert m.hint("c", Call("ship", {"id": 7})) == "call pay(id = 7) before calling ship"


def test_no_hint_for_an_unbroken_instance() -> None:
    """A call that breaks nothing gets no hint."""
    m = monitor(LOOKUP_FIRST)
    m.step(Call("lookup_order", {"order_id": "A1"}))
    assert m.hint("c", Call("issue_refund", {"order_id": "A1"})) == ""


def test_the_firewall_sends_the_quantified_hint_to_the_model() -> None:
    """A blocked refund's message tells the model which order to look up."""
    fw = Firewall(parse_spec(f"constraint lookup_first := {LOOKUP_FIRST}"), keep_trace=True)
    d = fw.propose("issue_refund", {"order_id": "A1"})
    assert d.action is Action.BLOCK
    assert 'To satisfy it: call lookup_order(order_id = "A1") before calling issue_refund.' in (
        d.message
    )


def test_propositional_hints_are_unchanged_and_data_tests_are_shown_inline() -> None:
    """Plain tools stay bare names; a letter with argument tests reads tool(field op value)."""
    m = monitor("G(issue_refund -> O verify_identity(level >= 2))")
    assert (
        m.hint("c", Call("issue_refund"))
        == "call verify_identity(level >= 2) before calling issue_refund"
    )
