"""The tamper-evident decision log: a hash chain per run, optionally keyed (HMAC).

Every JSON line a firewall writes carries ``seq`` (its index in the run's chain) and
``prev`` (the SHA-256 of the previous line of the same run, as written; the first line
of a run chains from the run's genesis, a hash of its run id). With a key, a line also
ends with ``"hmac"``: HMAC-SHA256 of the line without that field. Runs appended to one
file, even interleaved, each keep their own chain, so an appended file still verifies.

:func:`verify_lines` checks a log: an edited, removed, inserted or reordered line breaks
the chain of its run at that line or the next one (and, with a key, an edited line fails
its own HMAC). What it does *not* prove is in docs/audit.md: truncation of a run's last
lines is only caught once the run's finish line is required (``require_finish``) or the
head hash is anchored elsewhere; without a key anyone can rewrite a whole run and
recompute its chain; a key holder can always rewrite.

The cost per line is one SHA-256 over the rendered bytes (and one HMAC with a key).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from agentguard.enforcement.log_anchor import Anchored
from agentguard.trace.formats.agentguard_logs import DECISION_EVENT, FINISH_EVENT
from agentguard.trace.json_values import json_value, plain

CHAIN_VERSION: Final = "agentguard.log/1"


def genesis(run_id: str) -> str:
    """The ``prev`` of a run's first line."""
    return hashlib.sha256(f"{CHAIN_VERSION} genesis {run_id}".encode()).hexdigest()


def line_hash(line: str) -> str:
    """The hash the next line of the run carries as ``prev`` (the line without its newline)."""
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def _mac(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def _suffix(mac: str) -> str:
    return f', "hmac": "{mac}"}}'


class Chain:
    """Renders one run's log lines, each linked to the one before (not thread-safe: the
    firewall writes under its lock)."""

    def __init__(
        self, run_id: str, key: bytes | None = None, *, after: tuple[int, str] | None = None
    ) -> None:
        """A run's chain from its genesis, or continuing ``after`` = ``(seq, hash)`` of the
        run's last line written so far (a run restored from a saved state)."""
        self.run_id = run_id
        self.key = key
        self.seq = 0 if after is None else after[0] + 1
        self.head = genesis(run_id) if after is None else after[1]

    @property
    def last(self) -> tuple[int, str] | None:
        """``(seq, hash)`` of the last line rendered, None before the first: what a run
        saved now continues from."""
        return None if self.seq == 0 else (self.seq - 1, self.head)

    def render(
        self,
        record: Mapping[str, Any],
        event: str | None = None,
        checked: Iterable[str] | None = None,
    ) -> str:
        """The JSON line for ``record`` with ``seq``, ``prev`` (and ``hmac``) added;
        ``event``, when given, comes first; ``checked`` as for :func:`dumps`."""
        if event is None:
            fields = {**record, "run_id": self.run_id, "seq": self.seq, "prev": self.head}
        else:
            fields = {"event": event, **record, "run_id": self.run_id}
            fields["seq"], fields["prev"] = self.seq, self.head
        body = dumps(fields, checked)
        line = body if self.key is None else body[:-1] + _suffix(_mac(self.key, body))
        self.seq += 1
        self.head = line_hash(line)
        return line

    def advance(self, line: bytes) -> None:
        """``line`` (its bytes, newline last, rendered by the caller with this chain's
        ``seq`` and ``head``, and no key) was written: the chain moves past it."""
        self.seq += 1
        self.head = hashlib.sha256(memoryview(line)[:-1]).hexdigest()

    def encode(self, record: dict[str, Any], checked: Iterable[str] | None) -> bytes:
        """:meth:`render` for a record whose fields are already in line order (``event``
        first), as the UTF-8 bytes of the line and its newline: the firewall's per-call
        path. Adds ``seq`` and ``prev`` to ``record`` itself (the caller's own dict)."""
        record["seq"], record["prev"] = self.seq, self.head
        line = None
        ok = True
        for key in record if checked is None else checked:  # every line of the log
            value = record.get(key)
            if value is not None and not plain(value):
                ok = False
                break
        if ok:
            try:  # noqa: SIM105 - a with-statement costs more than the dumps on this path
                line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
            except TypeError:  # an unchecked field the caller vouched for was not plain
                pass
        if line is None or self.key is not None:
            body = line[:-1].decode() if line is not None else json.dumps(json_value(record))
            if self.key is not None:
                body = body[:-1] + _suffix(_mac(self.key, body))
            line = (body + "\n").encode("utf-8")
        self.seq += 1
        self.head = hashlib.sha256(memoryview(line)[:-1]).hexdigest()
        return line


def dumps(fields: Mapping[str, Any], checked: Iterable[str] | None = None) -> str:
    """One log line's JSON: what ``json.dumps(json_value(fields))`` says, rendered by
    orjson (several times faster, compact) when every value is plain JSON data, so both
    renderings mean the same document; anything else (an object, NaN, a huge int, a
    non-string key) keeps the standard library's rendering. ``checked`` names the fields
    that may hold such values (the caller vouches for the others); None: all of them."""
    values = fields.values() if checked is None else (fields.get(k) for k in checked)
    if all(plain(v) for v in values):
        try:
            return orjson.dumps(fields).decode()
        except TypeError:  # an unchecked field the caller vouched for was not plain
            pass
    return json.dumps(json_value(fields))


@dataclass(frozen=True, slots=True)
class Problem:
    """The first line that does not verify (1-based line number in the file)."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(slots=True)
class _Run:
    seq: int
    head: str
    line: int
    finished: bool = False


@dataclass(frozen=True, slots=True)
class AuditResult:
    """What :func:`verify_lines` found: ``problem`` is None when every line verified."""

    lines: int
    runs: dict[str, str] = field(default_factory=dict)  # run id -> hash of its last line
    problem: Problem | None = None
    unfinished: tuple[str, ...] = ()  # runs whose chain has no finish line (yet)
    macs_checked: bool = False

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "lines": self.lines,
            "runs": dict(self.runs),
            "problem": None
            if self.problem is None
            else {"line": self.problem.line, "reason": self.problem.reason},
            "unfinished": list(self.unfinished),
            "macs_checked": self.macs_checked,
        }


def _body(line: str, record: Mapping[str, Any], key: bytes) -> str | None:
    """The line without its HMAC field, if the line carries a valid one."""
    mac = record.get("hmac")
    if not isinstance(mac, str):
        return None
    suffix = _suffix(mac)
    if not line.endswith(suffix):
        return None
    body = line[: -len(suffix)] + "}"
    return body if hmac.compare_digest(_mac(key, body), mac) else None


def verify_lines(
    lines: Iterable[str],
    *,
    key: bytes | None = None,
    require_finish: bool = False,
    anchored: Anchored | None = None,
) -> AuditResult:
    """Check every run's chain in a log; stops at the first bad line (see the module
    docstring). A run never restarts its chain: one restored from a saved state goes on
    from the line it was saved after (``continuing.continuation``), so ``seq`` 0 twice for one
    run id is a restart (a fresh firewall reusing the run id) or a removal.

    ``anchored``: the heads a witness kept (:func:`~agentguard.enforcement.log_anchor.
    read_heads`); each run's chain must pass through every one of them, so lines removed
    at the end of a run, or a whole run removed, fail too."""
    runs: dict[str, _Run] = {}
    anchored = {} if anchored is None else anchored
    count = 0

    def fail(n: int, reason: str) -> AuditResult:
        heads = {r: s.head for r, s in runs.items()}
        return AuditResult(n, heads, Problem(n, reason), macs_checked=key is not None)

    for n, raw in enumerate(lines, start=1):
        count = n
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip():
            return fail(n, "empty line (a line was removed or the file was edited)")
        try:
            record = json.loads(line)
        except ValueError as exc:
            return fail(n, f"not a JSON line ({exc})")
        if not isinstance(record, dict):
            return fail(n, "not a JSON object")
        run_id, seq, prev = record.get("run_id"), record.get("seq"), record.get("prev")
        if not isinstance(run_id, str) or not isinstance(seq, int) or not isinstance(prev, str):
            return fail(n, "no chain fields (run_id, seq, prev): not a tamper-evident log line")
        if key is not None and _body(line, record, key) is None:
            what = "has no HMAC" if "hmac" not in record else "HMAC does not match"
            return fail(n, f"{what} (edited, or written with another key)")
        state, this = runs.get(run_id), line_hash(line)
        witnessed = anchored.get(run_id, {}).get(seq)
        if witnessed is not None and witnessed != this:
            return fail(n, f"run {run_id} seq {seq}: not the line whose hash was anchored")
        if seq == 0 and prev == genesis(run_id):  # a run's chain starts
            if state is not None:
                return fail(
                    n,
                    f"run {run_id} starts its chain again after seq {state.seq} (line "
                    f"{state.line}): a run continues its chain, so the run was restarted "
                    "without its state, or the lines of an earlier part were removed",
                )
            state = runs[run_id] = _Run(0, this, n)
        elif state is None:
            return fail(
                n, f"run {run_id} seq {seq} does not follow anything (earlier lines removed?)"
            )
        elif seq != state.seq + 1:
            return fail(
                n,
                f"run {run_id}: seq {seq} after seq {state.seq} (line {state.line}): "
                "lines removed, inserted or reordered",
            )
        elif prev != state.head:
            return fail(
                n,
                f"run {run_id}: prev does not match the hash of line {state.line}: "
                "that line was edited, or a line was removed, inserted or reordered",
            )
        else:
            state.seq, state.head, state.line = seq, this, n
        if record.get("event") == FINISH_EVENT:
            state.finished = True
        elif state.finished and not _refused_after_end(record):
            state.finished = False  # the run went on (a turn continued it): a later finish ends it
    unfinished = tuple(r for r, s in runs.items() if not s.finished)
    heads = {r: s.head for r, s in runs.items()}
    short = _short_of_anchor(runs, anchored)
    if short is not None:
        return AuditResult(count, heads, Problem(count, short), unfinished, key is not None)
    if require_finish and unfinished:
        last = max(runs[r].line for r in unfinished)
        return AuditResult(
            count,
            heads,
            Problem(
                last,
                f"run(s) {', '.join(unfinished)} end without a finish line "
                "(truncated, or still running)",
            ),
            unfinished,
            key is not None,
        )
    return AuditResult(count, heads, None, unfinished, key is not None)


def _refused_after_end(record: Mapping[str, Any]) -> bool:
    """A line a finished run may write after its finish line: a call refused because the
    run had ended (a refusal with no violation of its own). Anything else after a finish
    line means the run went on, and is finished again only by a later finish line."""
    return (
        record.get("event") == DECISION_EVENT
        and record.get("action") in ("block", "stop")
        and not record.get("violations")
    )


def _short_of_anchor(runs: Mapping[str, _Run], anchored: Anchored) -> str | None:
    """Why the log stops short of a head a witness kept, if it does."""
    for run_id, seqs in anchored.items():
        last = max(seqs, default=-1)
        state = runs.get(run_id)
        if state is None and seqs:
            return f"run {run_id} is anchored (up to seq {last}) but has no line: removed"
        if state is not None and state.seq < last:
            return (
                f"run {run_id} ends at seq {state.seq} (line {state.line}) but its head was "
                f"anchored at seq {last}: lines at its end were removed"
            )
    return None


__all__ = [
    "CHAIN_VERSION",
    "AuditResult",
    "Chain",
    "Problem",
    "genesis",
    "line_hash",
    "plain",
    "verify_lines",
]
