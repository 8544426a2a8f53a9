"""The decision log's chain: a continued run continues it, and a restart, a gap or a
removed part fails verification (``agentguard audit verify``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentguard as ag
from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.firewall import Firewall, FirewallStateError
from agentguard.enforcement.options import RecordsAgain
from agentguard.enforcement.prototype import spec_hash

SPEC = """
constraint cap severity SOFT_BLOCK := G !refund(amount > 500)
"""


def _turn(fw: Firewall, amount: int) -> None:
    d = fw.propose("refund", {"amount": amount}, tool_call_id=f"call-{amount}")
    if d.executes:
        fw.complete(fw.start(d), "ok")


def _two_turns(log: Path) -> list[str]:
    spec = ag.parse_spec(SPEC)
    fw = Firewall(spec, log_path=log, run_id="r1", keep_trace=True)
    _turn(fw, 10)
    _turn(fw, 900)  # refused: the tail someone wants gone
    fw.finish()
    fw2 = Firewall.restore(spec, fw.save(), log_path=log)
    _turn(fw2, 20)
    fw2.finish()
    return log.read_text().splitlines()


def test_a_continued_run_continues_its_chain(tmp_path: Path) -> None:
    lines = _two_turns(tmp_path / "d.jsonl")
    seqs = [json.loads(line)["seq"] for line in lines]
    assert seqs == list(range(len(lines)))
    assert verify_lines(lines, require_finish=True).ok


def test_removing_the_first_turn_fails(tmp_path: Path) -> None:
    lines = _two_turns(tmp_path / "d.jsonl")
    first_finish = next(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    result = verify_lines(lines[first_finish + 1 :], require_finish=True)
    assert not result.ok


def test_removing_the_violating_tail_of_the_first_turn_fails(tmp_path: Path) -> None:
    lines = _two_turns(tmp_path / "d.jsonl")
    blocked = next(i for i, line in enumerate(lines) if '"action":"block"' in line)
    first_finish = next(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    tampered = lines[:blocked] + lines[first_finish + 1 :]
    assert not verify_lines(tampered, require_finish=True).ok


@pytest.mark.parametrize("keep", ["its first line", "up to its decision"])
def test_a_continued_turn_cut_short_is_unfinished(tmp_path: Path, keep: str) -> None:
    """The first turn's finish line no longer covers a second turn whose tail (its result
    and finish line) was removed: ``--require-finish`` fails it (outside attack round 11)."""
    lines = _two_turns(tmp_path / "d.jsonl")
    first_finish = next(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    decision = next(
        i for i, line in enumerate(lines) if i > first_finish and '"agentguard.decision"' in line
    )
    cut = first_finish + 2 if keep == "its first line" else decision + 1
    result = verify_lines(lines[:cut], require_finish=True)
    assert not result.ok and "without a finish line" in str(result.problem)
    assert verify_lines(lines[:cut]).ok  # the chain itself is intact: only the end is missing


def test_a_fresh_firewall_reusing_the_run_id_is_a_restart(tmp_path: Path) -> None:
    """A run restarted without its state (its counts and stops forgotten) shows."""
    log = tmp_path / "d.jsonl"
    spec = ag.parse_spec(SPEC)
    for _ in range(2):
        fw = Firewall(spec, log_path=log, run_id="r1")
        _turn(fw, 10)
        fw.finish()
    result = verify_lines(log.read_text().splitlines())
    assert not result.ok and "starts its chain again" in str(result.problem)


def test_a_restore_from_an_older_state_continues_after_the_file_s_later_lines(
    tmp_path: Path,
) -> None:
    """A checkpoint saved before a batch ran, restored after the batch logged more lines
    by an adapter that records those calls again (LangGraph's resume, RecordsAgain):
    the chain goes on after those lines and verifies. A call that ran since and is not
    one it records again (a fork's) refuses the restore."""
    log = tmp_path / "d.jsonl"
    spec = ag.parse_spec(SPEC)
    fw = Firewall(spec, log_path=log, run_id="r1", keep_trace=True)
    _turn(fw, 10)
    checkpoint = fw.save()
    _turn(fw, 20)
    _turn(fw, 30)
    with pytest.raises(FirewallStateError, match="went on"):
        Firewall.restore(spec, checkpoint, stale=RecordsAgain(frozenset({"call-20"})), log_path=log)
    both = RecordsAgain(frozenset({"call-20", "call-30"}))
    fw2 = Firewall.restore(spec, checkpoint, stale=both, log_path=log)
    _turn(fw2, 40)
    fw2.finish()
    assert verify_lines(log.read_text().splitlines()).ok


def test_a_late_refusal_after_finish_stays_on_the_chain(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    fw = Firewall(ag.parse_spec(SPEC), log_path=log)
    _turn(fw, 10)
    fw.finish()
    fw.propose("refund", {"amount": 1})
    lines = log.read_text().splitlines()
    assert json.loads(lines[-1])["action"] == "block"
    assert verify_lines(lines, require_finish=True).ok


def test_a_comment_does_not_change_the_spec_s_identity() -> None:
    """Specs are compared by meaning: an edited comment keeps the hash (a restore is not
    refused, a HARD_STOP is not lifted); any change of meaning changes it."""
    base = ag.parse_spec(SPEC)
    commented = ag.parse_spec("# a note\n" + SPEC.replace(":=", ":=  ") + "\n# more\n")
    changed = ag.parse_spec(SPEC.replace("500", "501"))
    assert spec_hash(base) == spec_hash(commented)
    assert spec_hash(base) != spec_hash(changed)
    fw = Firewall(base, keep_trace=True)
    _turn(fw, 10)
    Firewall.restore(commented, fw.save())  # not refused


def test_a_state_older_than_the_log_cannot_roll_the_run_back(tmp_path: Path) -> None:
    """Found from outside: a state saved before a call ran, restored (after a crash, no
    finish line) into the run's log, forgot the call: a send the run refused after a
    secret was read was allowed, and its report disagreed with its own log. A state
    older than the log's record of the run is now refused; only an adapter that records
    the calls again itself (LangGraph resuming from its last model turn) continues one,
    only if each call that ran since is one it records again, and its chain then goes on
    after the run's lines (a state saved before any line included)."""
    from agentguard.enforcement.log_anchor import HeadFile, read_heads

    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    spec = ag.parse_spec("constraint leak severity SOFT_BLOCK := G !(send & O read_secret)")
    fw = Firewall(spec, log_path=log, run_id="r1", keep_trace=True, log_anchor=HeadFile(heads))
    early = fw.save()  # before any line
    fw.complete(fw.start(fw.propose("read_secret", {}, tool_call_id="r")), "s3cret")
    assert not fw.propose("send", {"body": "s3cret"}).executes  # then the process crashed
    with pytest.raises(FirewallStateError, match=r"went on in .* after this state was saved"):
        Firewall.restore(spec, early, log_path=log, log_anchor=HeadFile(heads))
    with pytest.raises(FirewallStateError, match="went on"):  # a fork: the read is not in it
        Firewall.restore(spec, early, stale=RecordsAgain(frozenset()), log_path=log)
    again = RecordsAgain(frozenset({"r"}))
    fw2 = Firewall.restore(spec, early, stale=again, log_path=log, log_anchor=HeadFile(heads))
    fw2.record("read_secret", {}, "s3cret")  # the adapter records again what ran
    assert not fw2.propose("send", {"body": "s3cret"}).executes
    fw2.finish()
    lines = log.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(len(lines)))
    anchored = read_heads(heads.read_text().splitlines())
    assert verify_lines(lines, require_finish=True, anchored=anchored).ok


def test_one_saved_run_restored_twice_goes_on_once(tmp_path: Path) -> None:
    """Found from outside: one paused run restored into two guards (OpenAI Agents
    restore_run twice), both resumed: a once-only refund ran twice, and only audit
    verify saw it afterwards (the chain forked). A restored run's first line now claims
    the chain's end under a lock on the file: the second firewall to write refuses
    (ChainForkError) and its call never runs; the log stays one chain."""
    from agentguard.enforcement.continuing import ChainForkError

    log = tmp_path / "d.jsonl"
    spec = ag.parse_spec("constraint once severity HARD_STOP := CalledN(refund, 1, <=)")
    fw = Firewall(spec, log_path=log, run_id="r1", keep_trace=True)
    fw.complete(fw.start(fw.propose("verify", {})), "ok")
    paused = fw.save()
    first = Firewall.restore(spec, paused, log_path=log)
    second = Firewall.restore(spec, paused, log_path=log)
    ran = []
    decision = first.propose("refund", {"order": "A"})
    if decision.executes:
        first.complete(first.start(decision), "refunded")
        ran.append("first")
    with pytest.raises(ChainForkError, match=r"continued .* by another firewall"):
        second.propose("refund", {"order": "A"})
    assert ran == ["first"]
    first.finish()
    assert verify_lines(log.read_text().splitlines(), require_finish=True).ok
