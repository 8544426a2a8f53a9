"""Anchored heads: what the decision log's chain cannot prove alone, a witness can.

A hash chain proves that no line *inside* a run was edited, removed or reordered, but
not that the file still holds the run's *last* lines: dropping lines at the end (the
refusals logged after a run's ``finish`` line, say, or a whole run) leaves a valid chain.
Only a copy of the head kept where the log's writer cannot rewrite it closes that gap.

``Firewall(..., log_path=..., log_anchor=HeadFile("heads.jsonl"))`` hands the firewall
an :class:`Anchor`: after every line it writes to the log, the firewall tells the anchor
that line's :class:`ChainHead` (run, ``seq``, hash). :class:`HeadFile` appends each one
as a JSON line; any callable will do (a remote append-only store, a transparency log, a
database row with write-once rights). ``agentguard audit verify LOG --heads HEADS``
then fails a log whose chain does not pass through every anchored head: a run the
witness saw that the log lacks, a run that ends before its anchored ``seq``, or a line
at an anchored ``seq`` whose hash differs (docs/audit.md, "Anchoring the head").
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentguard.errors import AgentGuardError

_HEX = frozenset("0123456789abcdef")


class HeadsFileError(AgentGuardError, ValueError):
    """A heads file (written by :class:`HeadFile`) has a line that is not a head; the
    message names the file and the line."""


@dataclass(frozen=True, slots=True)
class ChainHead:
    """The last line of run ``run_id``'s chain so far: its ``seq`` and its SHA-256
    (``head``, the ``prev`` the run's next line will carry)."""

    run_id: str
    seq: int
    head: str
    log: str | None = None  # the log file's absolute path: one witness may serve many logs

    def to_dict(self) -> dict[str, str | int]:
        fields: dict[str, str | int] = {"run_id": self.run_id, "seq": self.seq, "head": self.head}
        if self.log is not None:
            fields["log"] = self.log
        return fields


class Anchor(Protocol):
    """Told each new head of a run's chain, in order, right after its line is written.

    It is called under the firewall's lock, on the thread that wrote the line; an
    exception from it propagates as one from writing the log would (the line is already
    written)."""

    def __call__(self, head: ChainHead) -> None: ...


class HeadFile:
    """An :class:`Anchor` that appends each head to a JSON-lines file: one ``write(2)``
    per head, in append mode, so several firewalls (runs, processes) may share one file.

    Keep the file where the process writing the log cannot rewrite it (another user's
    directory, another volume, an append-only mount), or it anchors nothing.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fd: int | None = None

    def __call__(self, head: ChainHead) -> None:
        data = (json.dumps(head.to_dict()) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:  # a firewall's options may be dropped without close()
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            os.close(fd)

    def __repr__(self) -> str:
        return f"HeadFile({str(self.path)!r})"


Anchored = Mapping[str, Mapping[int, str]]
"""Run id -> ``seq`` -> the hash its line must have: what a witness saw."""


@dataclass(frozen=True, slots=True)
class Witnessed:
    """The heads a witness kept for one log (``anchored``), and the other logs it names
    (a heads file several logs share)."""

    anchored: dict[str, dict[int, str]]
    other_logs: frozenset[str]
    foreign: dict[str, str] = field(default_factory=dict)  # run -> another log it belongs to


def read_heads(
    lines: Iterable[str], source: str = "<heads>", *, log: str | None = None
) -> dict[str, dict[int, str]]:
    """The heads a :class:`HeadFile` wrote for the log at ``log`` (its absolute path;
    None: every head), by run and ``seq`` (see :func:`read_witness`)."""
    return read_witness(lines, source, log=log).anchored


def read_witness(
    lines: Iterable[str], source: str = "<heads>", *, log: str | None = None
) -> Witnessed:
    """The heads a :class:`HeadFile` wrote, by run and ``seq``: those naming the log at
    ``log`` and those naming none (None: every head). A line that is not a head raises
    :class:`HeadsFileError` naming ``source`` and the line; two different hashes for one
    ``seq`` of a run are an error too (two writers shared a run id: the witness itself
    cannot be trusted for that run)."""
    heads: dict[str, dict[int, str]] = {}
    others: set[str] = set()
    foreign: dict[str, str] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise HeadsFileError(f"{where}: not a JSON line ({exc})") from None
        if not isinstance(record, dict):
            raise HeadsFileError(f"{where}: not a JSON object")
        run_id, seq, head = record.get("run_id"), record.get("seq"), record.get("head")
        named = record.get("log")
        if (
            (named is not None and not isinstance(named, str))
            or not isinstance(run_id, str)
            or isinstance(seq, bool)
            or not isinstance(seq, int)
            or seq < 0
            or not isinstance(head, str)
            or len(head) != 64
            or not _HEX.issuperset(head)
        ):
            raise HeadsFileError(
                f"{where}: not a head (needs run_id: text, seq: an int >= 0, "
                "head: 64 lowercase hex digits, log: text if given)"
            )
        if log is not None and named is not None and named != log:
            others.add(named)
            foreign.setdefault(run_id, named)
            continue
        seen = heads.setdefault(run_id, {}).setdefault(seq, head)
        if seen != head:
            raise HeadsFileError(
                f"{where}: run {run_id!r} seq {seq} anchored with two different hashes "
                "(two writers used one run id?)"
            )
    return Witnessed(heads, frozenset(others), {r: n for r, n in foreign.items() if r not in heads})


__all__ = [
    "Anchor",
    "Anchored",
    "ChainHead",
    "HeadFile",
    "HeadsFileError",
    "Witnessed",
    "read_heads",
    "read_witness",
]
