"""A gzipped trace file cut short or damaged still gives every record before the break."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Firewall, load_traces, parse_spec
from agentguard.trace.gzipped import gunzip


def _records(n: int) -> bytes:
    lines = (
        json.dumps({"tool_calls": [{"tool_name": "search", "arguments": {"q": f"x{k * 7919}"}}]})
        for k in range(n)
    )
    return "".join(f"{line}\n" for line in lines).encode()


def _flushed(lines: list[bytes]) -> tuple[bytes, list[int]]:
    """A gzip stream of ``lines`` flushed after each (as a log writer streaming it does),
    and the offset where each line's bytes are complete."""
    engine = zlib.compressobj(wbits=31)
    out, ends = b"", []
    for line in lines:
        out += engine.compress(line) + engine.flush(zlib.Z_FULL_FLUSH)
        ends.append(len(out))
    return out + engine.flush(), ends


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.data())
def test_a_cut_gzip_gives_the_bytes_before_the_cut(lines: int, data: st.DataObject) -> None:
    """Cut anywhere, the stream gives a prefix of the file's bytes and says it broke."""
    raw = _records(lines)
    packed = gzip.compress(raw)
    cut = data.draw(st.integers(1, len(packed) - 1))
    read = gunzip(packed[:cut])
    assert raw.startswith(read.data)
    assert read.broken is not None


def test_a_whole_gzip_reads_as_gzip_decompress_including_several_members() -> None:
    """Whole files (several members, zero padding after one) read as ever, with no break."""
    packed = gzip.compress(b"a\n") + gzip.compress(b"b\n") + b"\x00\x00"
    assert gunzip(packed).data == b"a\nb\n" and gunzip(packed).broken is None


def test_a_cut_jsonl_gz_scores_the_lines_before_the_cut(tmp_path: Path) -> None:
    """2,000 lines cut 40 bytes short: the whole lines before the cut are traces, and the
    cut is an error naming its line (was: no record scored)."""
    path = tmp_path / "runs.jsonl.gz"
    packed = gzip.compress(_records(2000))
    path.write_bytes(packed[:-40])
    out = load_traces(path)
    good = [r for r in out if r.trace is not None]
    bad = [r for r in out if r.error is not None]
    assert len(good) >= 1900
    assert all(r.record <= len(good) for r in good)
    assert "gzip stream ends early" in str(bad[-1].error)
    assert bad[-1].record == max(r.record for r in out)


def test_a_cut_json_gz_is_one_error_that_says_why(tmp_path: Path) -> None:
    """A cut .json.gz (one document) cannot be read in part: one error naming the break."""
    path = tmp_path / "trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"tool_calls": []}).encode())[:-10])
    (only,) = load_traces(path)
    assert only.trace is None and "gzip stream ends early" in str(only.error)


def test_a_decision_log_cut_inside_a_run_does_not_score_that_run(tmp_path: Path) -> None:
    """A gzipped decision log cut at a line boundary of an open run: that run is an error,
    not a shorter run scored as if whole; runs finished before the cut are scored."""
    spec = parse_spec("constraint c := F search")
    log = tmp_path / "log.jsonl"
    done = Firewall(spec, log_path=log)
    done.propose("search", {})
    done.record("search", {}, "ok")
    done.finish()
    open_run = Firewall(spec, log_path=log)
    for _ in range(3):
        open_run.propose("search", {})
        open_run.record("search", {}, "ok")
    lines = log.read_bytes().splitlines(keepends=True)
    path = tmp_path / "log.jsonl.gz"
    stream, ends = _flushed(lines)
    path.write_bytes(stream[: ends[-3]])  # the open run's last two lines are lost, whole
    assert gunzip(stream[: ends[-3]]).data == b"".join(lines[:-2])
    out = load_traces(path)
    assert [r.trace is not None for r in out].count(True) == 1  # the finished run
    assert any("gzip stream ends early" in str(r.error) for r in out)
