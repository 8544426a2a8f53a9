"""GuardSession.propose_and_start: the tool gate's one step equals propose, then start."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.errors import AgentGuardError
from agentguard.guard import GuardSession
from tests.integrations._adapter_specs import rules

SPEC = rules(
    block={"delete_account"},
    warn={"verify_identity"},
    requires={"issue_refund": "lookup_order"},
)
TOOLS = ("lookup_order", "issue_refund", "delete_account", "verify_identity")
ORDERS = ("A1", "A2")

# how the tool gate's arguments relate to the batch's: the very dict, a copy (the same
# value objects: what smolagents hands a tool), equal values that are other objects
# (compared by key), or other values (a call the turn never proposed)
HOW = ("same", "copy", "equal", "other")


def arguments(tool: str, order: str) -> dict[str, Any]:
    if tool == "delete_account":
        return {}
    if tool == "verify_identity":
        return {"customer_id": order}
    if tool == "issue_refund":
        return {"order_id": order, "amount": 5}
    return {"order_id": order}


def gate_arguments(args: dict[str, Any], how: str) -> dict[str, Any]:
    if how == "same":
        return args
    if how == "copy":
        return dict(args)
    if how == "equal":  # rebuilt: equal, not identical (a str built at run time)
        return {k: "".join(list(v)) if isinstance(v, str) else v + 0 for k, v in args.items()}
    return {**args, "order_id": "Z9"}


call_st = st.tuples(
    st.sampled_from(TOOLS),
    st.sampled_from(ORDERS),
    st.one_of(st.none(), st.sampled_from(("c1", "c2", "c3"))),  # ids may repeat in a turn
    st.sampled_from(HOW),
    st.booleans(),  # collected by a tool gate (else left to withdraw_unclaimed)
    st.booleans(),  # the gate names the call's tool-call id (as LangChain's does)
)
turn_st = st.tuples(st.lists(call_st, min_size=0, max_size=4), st.integers(0, 2**16))  # order seed


def drive(turns: list[Any], *, fast: bool, log: Path) -> tuple[Any, ...]:
    """One run of ``turns`` through a session: each turn proposed as a batch, then its
    collected calls, in a drawn order, through the gate's step (``fast``; a call naming
    its tool-call id is proposed by id either way) or propose then start; what the run
    left behind."""
    made: list[Firewall] = []

    def factory() -> Firewall:
        made.append(Firewall(SPEC, run_id="r", log_path=log, keep_trace=True, start_timeout=0.0))
        return made[-1]

    s = GuardSession(SPEC, firewall_factory=factory)
    s.start_run()
    for calls, order in turns:
        batch: list[tuple[str, Mapping[str, Any], str | None]] = []
        gates: list[tuple[str, dict[str, Any], str | None]] = []
        for tool, order_id, tool_call_id, how, collected, named in calls:
            args = arguments(tool, order_id)
            batch.append((tool, args, tool_call_id))
            if collected:
                gates.append((tool, gate_arguments(args, how), tool_call_id if named else None))
        if batch:
            s.propose_batch(batch)
        random.Random(order).shuffle(gates)
        for tool, args, tool_call_id in gates:
            if fast and tool_call_id is None:
                decision = s.propose_and_start(tool, args)
            else:
                decision = s.propose(tool, args, tool_call_id=tool_call_id)
                if decision.executes:
                    decision = s.start(decision)
            if decision.executes:
                s.complete(decision, f"ran {tool}")
        s.withdraw_unclaimed("the framework never ran this call")
    report = s.finish_run()
    assert report is not None
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:  # the clock, and the hash chain over it
        line.pop("timestamp", None)
        line.pop("prev", None)
    return (
        [d.to_dict() for d in s.attempts],
        [d.to_dict() for d in report.decisions],
        [(c.name, dict(c.args), c.result) for c in report.trace.calls],
        None if s.stop is None else s.stop.to_dict(),
        report.compliance.score,
        lines,
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(turn_st, min_size=1, max_size=4))
def test_the_gate_step_is_propose_then_start(turns: list[Any]) -> None:
    """Decisions, attempts, trace, stop, score and log equal those of propose then start."""
    with tempfile.TemporaryDirectory() as tmp:
        fast = drive(turns, fast=True, log=Path(tmp) / "fast.jsonl")
        general = drive(turns, fast=False, log=Path(tmp) / "general.jsonl")
    assert fast == general


def test_the_usual_call_collects_its_batch_decision_and_starts_it() -> None:
    """One batch call, the same argument objects: its own decision, started, in flight."""
    made: list[Firewall] = []

    def factory() -> Firewall:
        made.append(Firewall(SPEC, keep_trace=True))
        return made[-1]

    s = GuardSession(SPEC, firewall_factory=factory)
    args = {"order_id": "A1"}
    (batched,) = s.propose_batch([("lookup_order", args, "c1")])
    assert s.propose_and_start("lookup_order", dict(args)) is batched
    assert made[0].is_in_flight(batched)
    s.complete(batched, "ok")
    assert [c.name for c in s.trace.calls] == ["lookup_order"]
    assert len(made[0].decisions) == 1  # not asked again


def test_a_refusal_at_start_is_the_answer() -> None:
    """A call withdrawn after its approval is refused by the gate's step, and not noted
    as in flight any more."""
    s = GuardSession(SPEC)
    (batched,) = s.propose_batch([("lookup_order", {"order_id": "A1"})])
    s.firewall.withdraw(batched, "a sibling stopped the run")
    refused = s.propose_and_start("lookup_order", batched.args)
    assert refused.action is Action.BLOCK
    assert refused.call_id == batched.call_id
    assert s.attempts[-1] is refused


def test_a_closed_session_refuses_the_gate_step() -> None:
    """With no batch decision waiting, a closed session refuses, as propose does."""
    s = GuardSession(SPEC)
    s.closed = True
    decision = s.propose_and_start("lookup_order", {"order_id": "A1"})
    assert decision.action is Action.BLOCK
    assert "already ended" in decision.message


def test_completing_a_call_the_ended_run_left_out_is_quiet() -> None:
    """A call still running when its run ended (logged unfinished) completes silently."""
    s = GuardSession(SPEC, start_timeout=0.0)
    (batched,) = s.propose_batch([("lookup_order", {"order_id": "A1"})])
    started = s.propose_and_start("lookup_order", batched.args)
    s.finish_run()
    s.complete(started, "late")
    assert s.report is not None
    assert s.report.trace.calls == ()


def test_a_stand_in_answering_a_batch_with_too_few_decisions_is_an_error() -> None:
    """A firewall stand-in that loses a batch call is refused before anything is noted."""

    class Lossy:
        stopped = False

        def propose_batch(self, calls: Any) -> list[Decision]:
            return []

    s = GuardSession(SPEC, firewall_factory=Lossy)  # type: ignore[arg-type]
    with pytest.raises(AgentGuardError, match="1 proposed call"):
        s.propose_batch([("lookup_order", {"order_id": "A1"})])
    assert s.attempts == []
