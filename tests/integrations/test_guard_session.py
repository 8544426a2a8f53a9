"""GuardSession: the per-agent state both adapters share."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.enforcement.firewall import Firewall
from agentguard.guard import GuardSession, blocked_text
from agentguard.guard_batch import _key
from agentguard.trace.refusal import BLOCKED_HEAD, STOPPED_HEAD
from tests.integrations._adapter_specs import rules
from tests.integrations.adapters import bind_arguments


def session(**kw: Any) -> tuple[GuardSession, list[Firewall]]:
    """A session over a real firewall, keeping every firewall it builds."""
    spec = rules(**kw)
    made: list[Firewall] = []

    def factory() -> Firewall:
        made.append(Firewall(spec, keep_trace=True))
        return made[-1]

    return GuardSession(spec, firewall_factory=factory), made


LOOKUP = ("lookup_order", {"order_id": "A1"})
REFUND = ("issue_refund", {"order_id": "A1", "amount": 5})


def test_batch_decisions_are_reused_not_asked_again() -> None:
    """After propose_batch, propose of the same call returns the batch decision."""
    s, made = session(block={"issue_refund"})
    batch = s.propose_batch([LOOKUP, REFUND])
    assert s.propose(*REFUND) is batch[1]
    assert s.propose(*LOOKUP) is batch[0]
    assert batch[1].action is Action.BLOCK
    assert len(made[0].decisions) == 2
    assert [d.tool for d in s.attempts] == ["lookup_order", "issue_refund"]


def test_unclaimed_batch_decisions_are_forgotten() -> None:
    """clear_predecided drops batch decisions no call collected."""
    s, made = session()
    s.propose_batch([LOOKUP, LOOKUP])
    s.clear_predecided()
    s.propose(*LOOKUP)
    assert len(made[0].decisions) == 3


def test_a_call_naming_its_id_collects_the_decision_with_that_id() -> None:
    """Of two identical batch calls, the one given by tool-call id is the one collected."""
    s, made = session()
    first, second = s.propose_batch([(*LOOKUP, "c1"), (*LOOKUP, "c2")])
    assert s.propose(*LOOKUP, tool_call_id="c2") is second
    assert s.propose(*LOOKUP, tool_call_id="c1") is first
    assert len(made[0].decisions) == 2


def test_an_id_with_other_arguments_is_checked_afresh() -> None:
    """A call whose arguments changed since the batch (a reviewer's edit) does not take
    the batch decision of its id: it is proposed again, and the batch decision, which
    will never run as decided, is withdrawn at once (left in flight, it held back the
    calls judged after it for the firewall's start timeout)."""
    s, made = session()
    (batched,) = s.propose_batch([(*LOOKUP, "c1")])
    fresh = s.propose("lookup_order", {"order_id": "B2"}, tool_call_id="c1")
    assert fresh is not batched
    assert fresh.args == {"order_id": "B2"}
    assert len(made[0].decisions) == 2
    assert not made[0].is_in_flight(batched)
    assert s.propose(*LOOKUP, tool_call_id="c1") is not batched


def test_a_call_without_its_id_still_collects_an_identical_one() -> None:
    """Collected by name and arguments (no id given), a decision is gone by id too."""
    s, made = session()
    (batched,) = s.propose_batch([(*LOOKUP, "c1")])
    assert s.propose(*LOOKUP) is batched
    again = s.propose(*LOOKUP, tool_call_id="c1")
    assert again is not batched
    assert len(made[0].decisions) == 2


def test_withdrawing_the_unclaimed_forgets_them_by_id_too() -> None:
    """After withdraw_unclaimed, a call naming a batch id is checked afresh."""
    s, made = session()
    (batched,) = s.propose_batch([(*LOOKUP, "c1")])
    s.withdraw_unclaimed("never ran")
    assert s.propose(*LOOKUP, tool_call_id="c1") is not batched
    assert len(made[0].decisions) == 2
    assert not made[0].is_in_flight(batched)


def test_a_stop_found_on_record_raises_run_stopped() -> None:
    """A result that makes the firewall stop raises RunStopped with a STOP decision."""
    s, _ = session(stop_on_result={"lookup_order"})
    s.propose(*LOOKUP)
    with pytest.raises(RunStopped) as caught:
        s.record(*LOOKUP, "fraud suspected")
    decision = caught.value.decision
    assert isinstance(decision, Decision)
    assert decision.action is Action.STOP
    assert s.stopped


def test_runs_are_fresh_and_finish_is_idempotent() -> None:
    """start_run builds a new firewall; finishing twice returns the same report."""
    s, made = session()
    s.start_run()
    s.propose(*LOOKUP)
    first = s.finish_run()
    assert s.finish_run() is first
    s.start_run()
    assert len(made) == 2
    assert s.attempts == []
    assert s.report is None


def test_trace_comes_from_the_live_run_then_the_report() -> None:
    """trace reads the current firewall during a run and the report after it."""
    s, _ = session()
    assert len(s.trace) == 0
    s.propose(*LOOKUP)
    s.record(*LOOKUP, "found")
    assert s.trace.names == ("lookup_order",)
    s.finish_run()
    assert s.trace.names == ("lookup_order",)


def test_log_path_falls_back_to_the_configured_one(tmp_path: Path) -> None:
    """Before a report names its log, log_path is the one passed to the firewall."""
    s = GuardSession(rules(), log_path=tmp_path / "l.jsonl")
    assert s.log_path == tmp_path / "l.jsonl"
    s.propose(*LOOKUP)
    report = s.finish_run()
    assert report is not None
    assert s.log_path == tmp_path / "l.jsonl"
    assert (tmp_path / "l.jsonl").read_text(encoding="utf-8").strip()


def test_listener_sees_every_decision_once() -> None:
    """on_decision is called once per decision, batch ones included."""
    seen: list[str] = []
    s = GuardSession(rules(), on_decision=lambda d: seen.append(d.tool))
    s.propose_batch([LOOKUP, REFUND])
    s.propose(*LOOKUP)
    s.propose("verify_identity", {"customer_id": "C"})
    assert seen == ["lookup_order", "issue_refund", "verify_identity"]


def test_concurrent_proposals_are_all_recorded() -> None:
    """Proposals from many threads are serialised: none lost, none doubled."""
    s, made = session()
    s.start_run()

    def work(i: int) -> None:
        for j in range(50):
            s.propose("lookup_order", {"order_id": f"{i}-{j}"})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(s.attempts) == 200
    assert len(made[0].decisions) == 200


def test_blocked_text_names_the_tool_and_reason() -> None:
    """The model reads the refusal marker, the tool and the firewall's message."""
    text = blocked_text(Decision(Action.BLOCK, "issue_refund", message="verify first"))
    assert text == f"{BLOCKED_HEAD}\nissue_refund: verify first"
    assert (
        blocked_text(Decision(Action.STOP, "rm", message="never")) == f"{STOPPED_HEAD}\nrm: never"
    )


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1, max_size=6),
    st.integers(0, 6),
    st.lists(st.integers(), min_size=6, max_size=6),
)
def test_bind_arguments_any_positional_split_gives_the_same_mapping(
    names: list[str], split: int, values: list[int]
) -> None:
    """Passing the first k inputs by position and the rest by name yields the same args."""
    split = min(split, len(names))
    full = dict(zip(names, values, strict=False))
    positional = tuple(full[n] for n in names[:split])
    keywords = {n: full[n] for n in names[split:]}
    assert bind_arguments("t", names, positional, keywords) == full


VERIFY = ("verify_identity", {"customer_id": "C1"})


def run_through(s: GuardSession, *calls: tuple[str, Mapping[str, object]]) -> None:
    for name, args in calls:
        assert s.propose(name, args).executes
        s.record(name, args, "ok")


class TestContinuedRuns:
    def test_resume_continues_the_last_finished_run(self) -> None:
        """start_run(resume=True) after a finished run extends its trace under its run id."""
        s = GuardSession(rules(requires={"issue_refund": "verify_identity"}))
        s.start_run()
        run_through(s, VERIFY)
        first = s.finish_run()
        s.start_run(resume=True)
        run_through(s, REFUND)
        second = s.finish_run()
        assert first is not None
        assert second is not None
        assert second.trace.names == ("verify_identity", "issue_refund")
        assert second.run_id == first.run_id
        assert [d.tool for d in s.attempts] == ["issue_refund"]

    def test_resume_keeps_an_active_run(self) -> None:
        """start_run(resume=True) while a run is going on changes nothing."""
        s = GuardSession(rules())
        run_through(s, LOOKUP)
        firewall = s.firewall
        s.start_run(resume=True)
        assert s.firewall is firewall
        assert s.trace.names == ("lookup_order",)

    def test_resume_without_an_earlier_run_starts_fresh(self) -> None:
        """With nothing to continue, resume=True is a fresh run."""
        s = GuardSession(rules())
        s.start_run(resume=True)
        assert s.trace.names == ()
        assert s.save_state() is not None

    def test_a_saved_state_is_continued_by_another_session(self) -> None:
        """start_run(state=...) in a new session restores the saved firewall."""
        spec = rules(requires={"issue_refund": "verify_identity"})
        old = GuardSession(spec)
        run_through(old, VERIFY)
        old.finish_run()
        saved = old.save_state()
        new = GuardSession(spec)
        new.start_run(state=saved)
        assert new.propose(*REFUND).executes

    def test_no_state_before_any_run(self) -> None:
        """save_state is None before a run started."""
        assert GuardSession(rules()).save_state() is None


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4))


@example({0: None, "0": 1})  # two keys with the same text
@given(st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), _VALUES, max_size=5))
def test_identical_calls_share_a_key_whatever_the_argument_order(args: dict[Any, Any]) -> None:
    """The batch key ignores the arguments' order (mixed key types included) and tells a
    changed value apart."""
    backwards = dict(reversed(list(args.items())))
    assert _key("t", args) == _key("t", backwards)
    assert _key("t", args) != _key("u", args)
    for name, value in args.items():
        changed = {**args, name: [value]}
        assert _key("t", changed) != _key("t", args)
