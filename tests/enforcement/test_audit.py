"""The tamper-evident decision log: hash chain per run, optional HMAC, verify_lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.enforcement.audit import Chain, dumps, genesis, line_hash, verify_lines
from agentguard.enforcement.firewall import Firewall
from agentguard.language import parse_spec

SPEC = parse_spec(
    "spec s\nconstraint first severity SOFT_BLOCK := G(refund -> O verify)\n"
    "constraint end severity TOLERATE := F final_answer"
)
KEY = b"audit-key"


def write_run(path: Path, *, key: bytes | None = None, run_id: str | None = None) -> Firewall:
    """One firewall run (a block, two executed calls, a finish) appended to ``path``."""
    fw = Firewall(SPEC, log_path=path, log_key=key, run_id=run_id)
    fw.propose("refund", {"order": "A1"})
    for name in ("verify", "refund"):
        d = fw.propose(name, {"order": "A1"})
        fw.complete(d, {"ok": True})
    fw.finish()
    return fw


def read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_firewall_lines_chain_from_the_run_genesis(tmp_path: Path) -> None:
    """seq counts from 0, the first prev is the genesis, each prev hashes the line before."""
    log = tmp_path / "d.jsonl"
    fw = write_run(log)
    lines = read(log)
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == list(range(len(lines)))
    assert records[0]["prev"] == genesis(fw.run_id)
    for before, record in zip(lines, records[1:], strict=False):
        assert record["prev"] == line_hash(before)
    assert verify_lines(lines).ok


def test_appended_and_interleaved_runs_still_verify(tmp_path: Path) -> None:
    """Two runs appended to one file, and two runs' lines interleaved, both verify."""
    log = tmp_path / "d.jsonl"
    write_run(log)
    write_run(log)
    result = verify_lines(read(log))
    assert result.ok and len(result.runs) == 2 and result.unfinished == ()
    a, b = Chain("a"), Chain("b")
    mixed = [a.render({"n": 1}), b.render({"n": 1}), a.render({"n": 2}), b.render({"n": 2})]
    assert verify_lines(mixed).ok


def test_hmac_lines_verify_only_with_the_key(tmp_path: Path) -> None:
    """With a key every line carries an HMAC; another key or no HMAC fails at line 1."""
    log = tmp_path / "d.jsonl"
    write_run(log, key=KEY)
    lines = read(log)
    assert all("hmac" in json.loads(line) for line in lines)
    assert verify_lines(lines, key=KEY).ok
    wrong = verify_lines(lines, key=b"other")
    assert wrong.problem is not None and wrong.problem.line == 1
    assert "HMAC does not match" in wrong.problem.reason
    plain = tmp_path / "plain.jsonl"
    write_run(plain)
    unkeyed = verify_lines(read(plain), key=KEY)
    assert unkeyed.problem is not None and "has no HMAC" in unkeyed.problem.reason


def test_a_keyed_edit_of_the_last_line_is_caught(tmp_path: Path) -> None:
    """An edit the chain cannot see (the last line) fails its HMAC."""
    log = tmp_path / "d.jsonl"
    write_run(log, key=KEY)
    lines = read(log)
    lines[-1] = lines[-1].replace("compliance", "c0mpliance")
    result = verify_lines(lines, key=KEY)
    assert result.problem is not None and result.problem.line == len(lines)


def test_truncation_is_caught_only_when_a_finish_is_required(tmp_path: Path) -> None:
    """Dropping a run's last lines leaves a valid prefix; require_finish names the run."""
    log = tmp_path / "d.jsonl"
    fw = write_run(log)
    cut = read(log)[:-2]
    assert verify_lines(cut).ok
    assert verify_lines(cut).unfinished == (fw.run_id,)
    strict = verify_lines(cut, require_finish=True)
    assert strict.problem is not None and fw.run_id in strict.problem.reason


def test_old_or_broken_lines_are_named(tmp_path: Path) -> None:
    """A line without chain fields, or not JSON, is reported with its line number."""
    assert verify_lines(['{"event": "x"}']).problem is not None
    chain = Chain("r")
    broken = verify_lines([chain.render({"a": 1}), "{not json"])
    assert broken.problem is not None and broken.problem.line == 2
    assert "not a JSON line" in broken.problem.reason


TAMPER = st.sampled_from(["edit", "remove", "insert", "swap"])


@settings(max_examples=60, deadline=None)
@given(kind=TAMPER, data=st.data())
def test_every_tampering_is_caught_at_or_after_its_line(kind: str, data: st.DataObject) -> None:
    """Editing, removing, inserting or reordering a line (not the last) breaks the chain."""
    chain = Chain("run1")
    lines = [chain.render({"event": "e", "step": i, "tool": f"t{i}"}) for i in range(8)]
    i = data.draw(st.integers(0, len(lines) - 2), label="line")
    out = list(lines)
    if kind == "edit":
        out[i] = out[i].replace(f'"t{i}"', f'"x{i}"')
    elif kind == "remove":
        del out[i]
    elif kind == "insert":
        forged = json.loads(lines[i])
        forged["tool"] = "forged"
        out.insert(i + 1, json.dumps(forged))
    else:
        out[i], out[i + 1] = out[i + 1], out[i]
    result = verify_lines(out)
    assert result.problem is not None
    # 1-based: the line itself or the next (a forged copy of a run's first line reads as a
    # restarted chain, so it is caught one line later)
    assert i + 1 <= result.problem.line <= i + 3


JSON_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(0, 9), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_DATA | st.builds(object), max_size=6))
def test_a_rendered_line_is_the_standard_json_document(fields: dict[str, Any]) -> None:
    """The fast rendering of a log line means what json.dumps(default=str) means."""
    expected = json.loads(json.dumps(fields, default=str))
    rendered = json.loads(dumps(fields))
    if isinstance(expected, dict):  # object() renders by its repr, which differs per call
        for key, value in fields.items():
            if type(value) is object:
                expected.pop(key), rendered.pop(key)
    assert json.dumps(rendered, sort_keys=True) == json.dumps(expected, sort_keys=True)
