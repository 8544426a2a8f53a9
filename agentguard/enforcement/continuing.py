"""How a restored run goes on writing its log: where its chain continues, what the log
holds of it after the state it was restored from, and its first line's claim.

A run continues only through its saved state (``Firewall.restore``); the state records
the line it was saved after. The file may hold later lines of the run (the process
that saved a checkpoint went on), or none of it. These helpers read the file backwards,
only as far as the saved line, and :func:`claimed_write` makes sure that of two
firewalls restored from one state only one goes on (docs/audit.md).
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

from agentguard.enforcement.audit import genesis, line_hash
from agentguard.errors import AgentGuardError
from agentguard.trace.formats.agentguard_logs import DECISION_EVENT, FINISH_EVENT, RESULT_EVENT


def continuation(path: Path, run_id: str, saved: tuple[int, str] | None) -> tuple[int, str] | None:
    """Where a run restored from a state saved after line ``saved`` = ``(seq, hash)``
    (None: saved before its first line) goes on writing to the log at ``path``: after
    the run's last line in that file when the file's chain of the run passes through
    ``saved`` (lines written after the save, e.g. by the process that saved a checkpoint
    before its batch ran, stay on the chain); else after ``saved`` itself (the file
    holds another part of the run, or none of it: verified alone it is a fragment, and
    says so).

    Reads the file backwards, only as far as the saved line (for a state saved before
    the run's first line, as far as that line: the whole file when it holds none of it).
    """
    seq, head = saved if saved is not None else (-1, "")
    last: tuple[int, str] | None = None
    for found, _, line in _run_lines_backwards(path, run_id):
        if last is None:
            last = (found, line_hash(line))
        if saved is None and found == 0:
            return last if _starts(line, run_id) else saved
        if found == seq:
            return last if line_hash(line) == head else saved
        if found < seq:
            break
    return saved


def _starts(line: str, run_id: str) -> bool:
    """Is ``line`` the first line of run ``run_id``'s chain (it chains from the genesis)?"""
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("prev") == genesis(run_id)


@dataclass(frozen=True, slots=True)
class LaterLines:
    """What the log holds of a run after the line a state was saved after: ``decided``,
    the seq of its last decision or result line (calls were judged or ran since the
    save), and ``finished``, the seq of its finish line after those (the run then
    ended); None where there is none."""

    decided: int | None = None
    finished: int | None = None
    ran: tuple[str | None, ...] = ()  # the tool-call ids of the calls that ran since


def lines_after(path: Path, run_id: str, saved: tuple[int, str] | None) -> LaterLines:
    """:class:`LaterLines` of run ``run_id`` in the file at ``path`` after the line
    ``saved`` (None: after the genesis). A state from before calls the log shows were
    judged or ran is older than the run: its counts and stops are not the run's (a
    restore from it would roll the run back). A state saved at the end of a turn (only
    the finish line came after it: a conversation's next turn) may continue it.

    Reads the file backwards, only as far as the saved line.
    """
    limit = -1 if saved is None else saved[0]
    finished: int | None = None
    decided: int | None = None
    ran: list[str | None] = []
    for found, record, _ in _run_lines_backwards(path, run_id):
        if found <= limit:
            break
        event = record.get("event")
        if event == FINISH_EVENT:
            finished = found if finished is None else finished
        elif event in (DECISION_EVENT, RESULT_EVENT) and decided is None:
            decided = found
        if event == RESULT_EVENT:
            call = record.get("tool_call_id")
            ran.append(call if isinstance(call, str) else None)
    if decided is None:
        return LaterLines()
    ended = finished if finished is not None and finished > decided else None
    return LaterLines(decided, ended, tuple(reversed(ran)))


class ChainForkError(AgentGuardError, RuntimeError):
    """A restored run's first line would fork its chain: another firewall continued the
    same saved run since this one was restored (two restores of one state)."""


def run_head(path: Path, run_id: str) -> tuple[int, str] | None:
    """``(seq, hash)`` of run ``run_id``'s last line in the file at ``path`` (None: none)."""
    for found, _, line in _run_lines_backwards(path, run_id):
        return found, line_hash(line)
    return None


def claimed_write(
    file: BinaryIO, data: bytes, path: Path, run_id: str, head: tuple[int, str] | None
) -> None:
    """Write a restored run's first line, under an exclusive lock on the file, only if
    the file's chain of the run still ends at ``head``, where it ended when the run was
    restored: of two firewalls continuing one saved run, the second to write refuses
    (:class:`ChainForkError`) instead of forking the chain (its call does not run)."""
    fcntl.flock(file.fileno(), fcntl.LOCK_EX)
    try:
        now = run_head(path, run_id)
        if now != head:
            raise ChainForkError(
                f"run {run_id} was continued in {path} by another firewall since this one "
                f"was restored (its chain now ends at seq {now[0] if now else None}): one "
                "saved run is continued once; restore its latest state"
            )
        view = memoryview(data)
        while view:
            view = view[file.write(view) or 0 :]
    finally:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)


def end_torn_line(file: BinaryIO, path: Path) -> None:
    """End the file's last line if a writer left it without its newline (a process killed
    mid-write, a full disk), before a run appends its first line: else that torn line
    swallows it, and the run's chain starts inside a line no reader parses (the run then
    reads as one whose first lines are missing, and the next ones as complete). The torn
    line stays as it is, for ``audit verify`` to report; under the file's lock, so two
    firewalls opening it at once do not both end it.

    A line without its newline may also be one another run is appending right now (a
    write(2) spanning pages shows its first page before its last): only a line that stays
    unended while the file does not grow for :data:`_SETTLE` seconds is torn. Ending a
    line still being written would leave a blank line after it."""
    fcntl.flock(file.fileno(), fcntl.LOCK_EX)
    try:
        if _unended_line(path):
            view = memoryview(b"\n")
            while view:
                view = view[file.write(view) or 0 :]
    finally:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)


_SETTLE: Final = 0.05
"""Seconds an unended last line must stay as it is to count as torn (a write in progress
completes in microseconds; a killed writer's line never does)."""
_SETTLE_ROUNDS: Final = 40
"""At most this many waits while other writers keep the file growing (2 s): then the line
is taken as torn (a blank line is harmless to readers; a swallowed first line is not)."""


def _unended_line(path: Path) -> bool:
    """The file's last byte is not a newline, and stays so while the file is still."""
    with path.open("rb") as reader:
        size = reader.seek(0, 2)
        for _ in range(_SETTLE_ROUNDS):
            if not size:
                return False
            reader.seek(size - 1)
            if reader.read(1) == b"\n":
                return False
            time.sleep(_SETTLE)
            grown = reader.seek(0, 2)
            if grown == size:
                return True
            size = grown
        return True


def _run_lines_backwards(path: Path, run_id: str) -> Iterator[tuple[int, dict[str, Any], str]]:
    """``(seq, record, line)`` of run ``run_id``'s lines in the file, last first."""
    # a quick test first: both renderings write an ASCII run id as json.dumps does
    needle = json.dumps(run_id) if run_id.isascii() else None
    for line in _lines_backwards(path):
        if needle is not None and needle not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("run_id") != run_id:
            continue
        found = record.get("seq")
        if isinstance(found, int):
            yield found, record, line


_CHUNK: Final = 1 << 16


def _lines_backwards(path: Path) -> Iterator[str]:
    """The lines of a file, last first (decoded as UTF-8; a line that is not is skipped)."""
    try:
        file = path.open("rb")
    except OSError:
        return
    with file:
        end = file.seek(0, 2)
        rest = b""
        while end > 0:
            start = max(0, end - _CHUNK)
            file.seek(start)
            block = file.read(end - start) + rest
            end = start
            parts = block.split(b"\n")
            rest = parts[0] if start > 0 else b""
            for raw in reversed(parts[1:] if start > 0 else parts):
                if raw.strip():
                    try:
                        yield raw.decode("utf-8").rstrip("\r")
                    except UnicodeDecodeError:
                        continue


__all__ = [
    "ChainForkError",
    "LaterLines",
    "claimed_write",
    "continuation",
    "lines_after",
    "run_head",
]
