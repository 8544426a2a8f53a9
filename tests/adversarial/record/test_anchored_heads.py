"""Truncation at the end, and whole runs removed: what the chain alone cannot show, the
anchored heads do (``Firewall(log_anchor=HeadFile(...))``, ``audit verify --heads``).

The attack (found by an outside tester against the keyed log with ``--require-finish``):
a call refused after its run ended is logged after the ``finish`` line; deleting those
refusal lines left a chain that verified. Every test here deletes, truncates or rewrites
at the end of a run, where the chain cannot see it, and expects the heads to.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentguard as ag
from agentguard.cli.main import main
from agentguard.enforcement.audit import Chain, verify_lines
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.log_anchor import ChainHead, HeadFile, HeadsFileError, read_heads

SPEC = ag.parse_spec("constraint cap severity SOFT_BLOCK := G !refund(amount > 500)")
KEY = b"audit-key"


def _run(log: Path, heads: Path, run_id: str = "r1") -> list[str]:
    """A keyed run that finishes, then is sent a call it refuses (a late refusal)."""
    fw = Firewall(SPEC, log_path=log, log_key=KEY, run_id=run_id, log_anchor=HeadFile(heads))
    for amount in (10, 900):
        d = fw.propose("refund", {"amount": amount})
        if d.executes:
            fw.complete(fw.start(d), "ok")
    fw.finish()
    fw.propose("refund", {"amount": 1})  # after the end: refused, logged after finish
    return log.read_text(encoding="utf-8").splitlines()


def _verify(lines: list[str], heads: Path) -> ag.enforcement.audit.AuditResult:
    anchored = read_heads(heads.read_text(encoding="utf-8").splitlines(), str(heads))
    return verify_lines(lines, key=KEY, require_finish=True, anchored=anchored)


def test_every_line_s_head_is_anchored_in_order(tmp_path: Path) -> None:
    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    lines = _run(log, heads)
    anchored = [json.loads(line) for line in heads.read_text().splitlines()]
    assert [a["seq"] for a in anchored] == list(range(len(lines)))
    assert [a["head"] for a in anchored] == [ag.enforcement.audit.line_hash(line) for line in lines]
    assert _verify(lines, heads).ok


def test_deleting_the_refusals_after_finish_fails(tmp_path: Path) -> None:
    """The reported attack: without the heads it passes; with them it fails."""
    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    lines = _run(log, heads)
    finish = max(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    assert finish < len(lines) - 1  # the late refusal is after it
    cut = lines[: finish + 1]
    assert verify_lines(cut, key=KEY, require_finish=True).ok  # the gap this closes
    result = _verify(cut, heads)
    assert result.problem is not None
    assert "anchored at seq" in result.problem.reason and "removed" in result.problem.reason


def test_deleting_a_whole_run_fails(tmp_path: Path) -> None:
    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    _run(log, heads, "r1")
    lines = _run(log, heads, "r2")
    only_r1 = [line for line in lines if json.loads(line)["run_id"] == "r1"]
    assert verify_lines(only_r1, key=KEY, require_finish=True).ok
    result = _verify(only_r1, heads)
    assert result.problem is not None and "run r2 is anchored" in result.problem.reason


def test_a_keyless_rewrite_of_a_whole_run_fails(tmp_path: Path) -> None:
    """Without a key anyone can recompute a run's chain; the anchored hashes still differ."""
    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    fw = Firewall(SPEC, log_path=log, run_id="r1", log_anchor=HeadFile(heads))
    fw.propose("refund", {"amount": 900})
    fw.finish()
    chain = Chain("r1")  # the forger's: the same events, the refusal turned into an allow
    forged = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        record.pop("seq"), record.pop("prev")
        if record.get("action") == "block":
            record["action"] = "allow"
        forged.append(chain.render(record))
    anchored = read_heads(heads.read_text().splitlines())
    assert verify_lines(forged).ok
    result = verify_lines(forged, anchored=anchored)
    assert result.problem is not None and result.problem.line == 1
    assert "not the line whose hash was anchored" in result.problem.reason


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_any_truncation_of_any_run_fails(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Law: with the heads, removing any non-empty set of lines from the end of any run
    (the others intact, interleaved) never verifies; the untouched log always does."""
    folder = tmp_path_factory.mktemp("runs")
    log, heads = folder / "d.jsonl", folder / "heads.jsonl"
    for run_id in ("a", "b"):
        lines = _run(log, heads, run_id)
    assert _verify(lines, heads).ok
    victim = data.draw(st.sampled_from(["a", "b"]), label="run")
    own = [i for i, line in enumerate(lines) if json.loads(line)["run_id"] == victim]
    keep = data.draw(st.integers(0, len(own) - 1), label="kept lines of the run")
    dropped = set(own[keep:])
    assert not _verify([line for i, line in enumerate(lines) if i not in dropped], heads).ok


def test_a_restored_run_anchors_its_continuation(tmp_path: Path) -> None:
    """A run continued from its saved state goes on anchoring after the saved line."""
    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    fw = Firewall(SPEC, log_path=log, run_id="r1", keep_trace=True, log_anchor=HeadFile(heads))
    fw.complete(fw.start(fw.propose("refund", {"amount": 5})), "ok")
    fw.finish()
    fw2 = Firewall.restore(SPEC, fw.save(), log_path=log, log_anchor=HeadFile(heads))
    fw2.propose("refund", {"amount": 900})
    fw2.finish()
    lines = log.read_text().splitlines()
    anchored = read_heads(heads.read_text().splitlines())
    assert sorted(anchored["r1"]) == list(range(len(lines)))
    assert verify_lines(lines, require_finish=True, anchored=anchored).ok
    second = max(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    assert not verify_lines(lines[:second], anchored=anchored).ok


def test_a_broken_heads_file_is_named_by_line() -> None:
    good = json.dumps(ChainHead("r", 0, "a" * 64).to_dict())
    with pytest.raises(HeadsFileError, match=r"^h.jsonl:2: not a JSON line"):
        read_heads([good, "{oops"], "h.jsonl")
    with pytest.raises(HeadsFileError, match=r"^h.jsonl:1: not a head"):
        read_heads(['{"run_id": "r", "seq": true, "head": "' + "a" * 64 + '"}'], "h.jsonl")
    other = json.dumps(ChainHead("r", 0, "b" * 64).to_dict())
    with pytest.raises(HeadsFileError, match=r"^h.jsonl:2: run 'r' seq 0 anchored with two"):
        read_heads([good, other], "h.jsonl")


def test_the_cli_checks_the_heads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log, heads = tmp_path / "d.jsonl", tmp_path / "heads.jsonl"
    key = tmp_path / "key"
    key.write_bytes(KEY)
    lines = _run(log, heads)
    base = ["audit", "verify", str(log), "--key-file", str(key), "--require-finish"]
    assert main([*base, "--heads", str(heads)]) == 0
    assert "through 5 anchored head(s)" in capsys.readouterr().out
    log.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    assert main(base) == 0  # the chain alone: intact
    capsys.readouterr()
    assert main([*base, "--heads", str(heads)]) == 1
    assert "lines at its end were removed" in capsys.readouterr().err
    heads.write_bytes(b"\xff\xfe not text\n")
    assert main([*base, "--heads", str(heads)]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err


def test_a_witness_that_fails_cannot_undo_a_stop(tmp_path: Path) -> None:
    """Found from outside: an anchor raising on the result line of a call whose result
    breaks a HARD_STOP left the run unstopped (the stop was set after the log line), and
    the next call ran. The run's state now comes first; the error still propagates."""
    spec = ag.parse_spec("constraint evil severity HARD_STOP := G !lookup(result.evil = true)")
    fails = {"at": -1}
    written: list[ChainHead] = []

    def flaky(head: ChainHead) -> None:
        if len(written) == fails["at"]:
            fails["at"] = -1
            raise OSError("witness unavailable")
        written.append(head)

    fw = Firewall(spec, log_path=tmp_path / "d.jsonl", log_anchor=flaky)
    started = fw.start(fw.propose("lookup", {"order_id": "A"}))
    fails["at"] = len(written)  # the result line's head fails to reach the witness
    with pytest.raises(OSError, match="witness unavailable"):
        fw.complete(started, {"evil": True})
    assert fw.stopped
    assert not fw.propose("pay", {"order_id": "A"}).executes
    report = fw.finish()
    assert report.stopped and [v.constraint for v in report.late_violations] == ["evil"]


def test_one_witness_serves_several_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found from outside: two firewalls writing two logs, one heads file (as several
    proxies would): each intact log failed, "anchored but has no line", for the other's
    run. Each head now names its log; a log is checked against its own heads, still
    failing a cut, and a copy verified elsewhere must name the original path."""
    heads = tmp_path / "witness" / "heads.jsonl"
    key = tmp_path / "key"
    key.write_bytes(KEY)
    logs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for run_id, log in zip(("ra", "rb"), logs, strict=True):
        _run(log, heads, run_id)
    assert {json.loads(line)["log"] for line in heads.read_text().splitlines()} == {
        str(log.resolve()) for log in logs
    }
    for log in logs:
        base = ["audit", "verify", str(log), "--key-file", str(key), "--require-finish"]
        assert main([*base, "--heads", str(heads)]) == 0, capsys.readouterr().err
    first = logs[0].read_text().splitlines()
    copy = tmp_path / "elsewhere" / "a.jsonl"
    copy.parent.mkdir()
    copy.write_text("\n".join(first[:-1]) + "\n")  # a copy, cut at its end
    base = ["audit", "verify", str(copy), "--key-file", str(key), "--heads", str(heads)]
    capsys.readouterr()
    assert main(base) == 2  # no head names the copy's path: not a silent pass
    assert "give the log's path as the witness names it" in capsys.readouterr().err
    assert main([*base, "--heads-log", str(logs[0].resolve())]) == 1
    assert "lines at its end were removed" in capsys.readouterr().err


def test_a_run_copied_in_from_another_log_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found from outside: log A's whole (keyed) run appended to log B, verified with B's
    heads from a shared witness, passed: heads naming A were set aside. A run of the
    verified log that the witness anchored only for another log now fails."""
    heads = tmp_path / "heads.jsonl"
    key = tmp_path / "key"
    key.write_bytes(KEY)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _run(a, heads, "ra")
    _run(b, heads, "rb")
    b.write_text(b.read_text() + a.read_text())
    verify = ["audit", "verify", str(b), "--key-file", str(key), "--heads", str(heads)]
    assert main(verify) == 1
    assert "run ra was anchored for another log" in capsys.readouterr().err
