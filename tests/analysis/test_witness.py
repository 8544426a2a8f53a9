"""`find_witness`: a verified shortest satisfying trace, or a proof that none exists."""

from __future__ import annotations

from agentguard.analysis import find_witness
from agentguard.language import parse_spec
from agentguard.scoring import verify_trace

SPEC = """tool lookup(order_id: str)
tool refund(order_id: str, amount: number)
constraint looked := Before(lookup, refund)
constraint refunded := F refund(amount > 0)
constraint capped := G !refund(amount > 500)
constraint answered := F final_answer
"""


def test_witness_is_shortest_and_verifies() -> None:
    """Three calls are needed (lookup before refund, an answer); the witness has three and passes."""
    spec = parse_spec(SPEC)
    w = find_witness(spec)
    assert w.records is not None and len(w.records) == 3
    names = [r["tool_name"] for r in w.records]
    assert sorted(names) == ["final_answer", "lookup", "refund"]
    assert names.index("lookup") < names.index("refund")
    assert verify_trace(w.records, spec).passed


def test_values_are_chosen_to_pass_the_tests() -> None:
    """A call needing `i = 1` then one needing `i = 2` gets those values, in order."""
    spec = parse_spec(
        "tool t(i: int)\nconstraint a := InOrder([t, t])\n"
        "constraint one := CalledWith(t, {i: 1})\nconstraint two := CalledWith(t, {i: 2})\n"
        "constraint exactly := CalledN(t, 2, =)"
    )
    w = find_witness(spec)
    assert w.records is not None
    assert sorted(r["arguments"]["i"] for r in w.records) == [1, 2]


def test_empty_witness_comes_with_a_non_empty_one() -> None:
    """A safety-only spec is satisfied by the empty trace; a one-call witness is given too."""
    w = find_witness(parse_spec("constraint a := G !rm"))
    assert w.records == []
    assert w.nonempty is not None and len(w.nonempty) == 1
    assert w.nonempty[0]["tool_name"] != "rm"


def test_conflicting_spec_gets_the_proof() -> None:
    """No trace satisfies `F pay` with `G !pay`: the witness names the conflicting set."""
    w = find_witness(
        parse_spec("constraint a := F pay\nconstraint b := G !wipe\nconstraint c := G !pay")
    )
    assert w.records is None and w.proven_unsatisfiable
    assert w.conflict == ("a", "c")


def test_unsatisfiable_constraint_is_the_proof() -> None:
    """One unsatisfiable constraint is proof enough."""
    w = find_witness(parse_spec("constraint a := F x & G !x"))
    assert w.conflict == ("a",)


def test_quantified_constraints_are_verified() -> None:
    """A forall constraint outside the automaton still holds on the printed witness."""
    spec = parse_spec(
        "tool get(id: str)\ntool put(id: str)\n"
        "constraint c := forall o: G(put(id = o) -> O get(id = o))\n"
        "constraint d := F put & F get"
    )
    w = find_witness(spec)
    assert w.records is not None and verify_trace(w.records, spec).passed
