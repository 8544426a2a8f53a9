"""Structured decision logs: one structlog event per decision, JSON lines to a file
and/or into the user's own structlog pipeline.

Field names are stable (tests pin them): ``event run_id step tool args constraint layer
weight severity verdict action message spec spec_hash timestamp`` plus ``violations``
(every violated constraint) and ``pending``; decisions also carry ``call_id`` (unique in
the run) and ``tool_call_id`` (the framework's). The file logger writes and flushes every
line, so nothing is lost on a HARD_STOP or an exception. File lines are hash-chained
per run (``seq``, ``prev``, and ``hmac`` with a key: agentguard/enforcement/audit.py), so
``agentguard audit verify LOG`` tells an intact log from an edited one.

Besides decisions, the log says what really happened to each allowed call: an
``agentguard.result`` event when it ran (its position, its result and whether it was an
error), an ``agentguard.withdrawn`` event when it never ran, with the reason. The
executed trace is rebuilt from the result events, so ``agentguard check LOG`` scores what
ran. Under a redactor, every field that can carry an argument value is scrubbed: the
arguments (by the redactor), and the message, violation details and hints, errors (each
value the redactor removed or changed is replaced by ``[redacted]``); results are replaced
by a digest (``result_sha256``), so a check of such a log cannot judge tests on results.
"""

from __future__ import annotations

import io
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentguard.enforcement import continuing, hooks
from agentguard.enforcement.audit import Chain
from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.log_anchor import Anchor, ChainHead
from agentguard.enforcement.log_lines import LineTemplates, timestamp
from agentguard.enforcement.log_redaction import (
    Redactor,
    safe_args,
    scrub,
    secret_texts,
    violation_records,
)
from agentguard.trace.formats.agentguard_logs import (
    DECISION_EVENT,
    MESSAGE_EVENT,
    RESULT_EVENT,
    WITHDRAWN_EVENT,
)
from agentguard.trace.identity import digest
from agentguard.trace.model import Call

LATE_EVENT: Final = "agentguard.late_violation"
ERROR_EVENT: Final = "agentguard.predicate_error"
FAILURE_EVENT: Final = "agentguard.internal_error"
BUDGET_EVENT: Final = "agentguard.budget"  # a constraint's monitor hit its state budget
"""A dialogue event (a user or assistant message) the firewall observed."""

FIELDS: Final = (
    "event",
    "run_id",
    "step",
    "tool",
    "args",
    "constraint",
    "layer",
    "weight",
    "severity",
    "verdict",
    "action",
    "message",
    "spec",
    "spec_hash",
    "timestamp",
    "violations",
    "pending",
)
"""The fields of every decision event, in this order."""
USER_DATA: Final = ("args", "result", "approval", "violations")
"""The fields whose values come from the agent, its tools or its approver (any Python
object); the others are the firewall's own strings, numbers and lists of them."""
KNOWN: Final = frozenset(
    (*FIELDS, *USER_DATA, "escalated", "call_id", "tool_call_id", "shadow", "is_error")
) | {"position", "result_sha256", "kind", "would_block"}
"""Every field the firewall writes; an event with another field is checked whole."""


class DecisionLog:
    """Sends decision events to a JSON-lines file and/or a user structlog logger."""

    def __init__(
        self,
        *,
        run_id: str,
        spec_name: str | None,
        spec_hash: str,
        path: str | Path | None = None,
        logger: Any = None,
        redact: Redactor | None = None,
        key: bytes | None = None,
        anchor: Anchor | None = None,
    ) -> None:
        self.run_id = run_id
        self._anchor = anchor  # told each line's head (log_anchor.py): truncation shows
        self._anchor_log: str | None = None
        self._claim: object = _CLAIMED  # a restored run's chain end at its restore
        self.spec_name = spec_name
        self.spec_hash = spec_hash
        self.path = Path(path) if path is not None else None
        self.redact = redact
        self._user = logger
        self._file: io.FileIO | None = None
        self._chain: Chain | None = None
        # a file or a user logger takes the events (kept as a field: read on every call)
        self.active = logger is not None
        self._key = key
        self._lines: LineTemplates | None = None  # a plain file log: the fast lines
        self._common: dict[str, Any] = {
            "event": None,
            "run_id": run_id,
            "step": None,
            "tool": None,
            "args": None,
            "constraint": None,
            "layer": None,
            "weight": None,
            "severity": None,
            "verdict": None,
            "action": None,
            "message": "",
            "spec": spec_name,
            "spec_hash": spec_hash,
            "timestamp": None,
            "violations": [],
            "pending": [],
        }
        if self.path is not None:
            self._open()

    def attach(self, path: str | Path, *, after: tuple[int, str] | None) -> None:
        """Write the run's lines to ``path`` from now on, continuing its chain ``after``
        the line ``(seq, hash)`` it was saved after (a restored run; None: from the
        genesis). Where the file holds later lines of the run, the chain goes on after
        them (:func:`~agentguard.enforcement.continuing.continuation`)."""
        self.path, self._anchor_log = Path(path), None
        self._claim = continuing.run_head(
            self.path, self.run_id
        )  # the first line checks it still is
        self._open(continuing.continuation(self.path, self.run_id, after))

    @property
    def chain_position(self) -> tuple[int, str] | None:
        """``(seq, hash)`` of the run's last line in the file, None before any (or with
        no file): what a saved state records so that a restored run continues the chain."""
        return None if self._chain is None else self._chain.last

    def _open(self, after: tuple[int, str] | None = None) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # unbuffered: each line is one write(2) of its UTF-8 bytes, on disk (in the OS)
        # when emit returns, with no buffer to flush
        self._file = io.FileIO(self.path, "a")
        weakref.finalize(self, self._file.close)  # a run abandoned without finish() leaks nothing
        continuing.end_torn_line(self._file, self.path)
        self._chain = Chain(self.run_id, self._key, after=after)
        self.active = True
        if self._key is None and self._user is None:  # the byte templates' case
            self._lines = LineTemplates(self.run_id, self.spec_name, self.spec_hash)

    @property
    def enabled(self) -> bool:
        """Anyone takes the events: the file, the user's logger or a registered sink."""
        return self.active or bool(hooks.SINKS)

    def decision(self, d: Decision) -> None:
        if not (self.active or hooks.SINKS):
            return
        lines = self._lines
        if (
            lines is not None
            and not d.violations
            and d.shadow is None
            and d.approval is None
            and self.redact is None
            and not hooks.SINKS
        ):
            chain = self._chain
            assert chain is not None  # the templates are dropped when the log closes
            line = lines.decision(d, timestamp(), chain.seq, chain.head)
            if line is not None:
                self._write(line)
                chain.advance(line)
                if self._anchor is not None:
                    self._anchored(chain)
                return
        if self.redact is None:  # nothing to scrub: the firewall's own text as it is
            message = d.message
            violations = violation_records(d.violations, ()) if d.violations else []
        else:
            secrets = secret_texts(self.redact, d.tool, d.args)
            message = scrub(d.message, secrets)
            violations = violation_records(d.violations, secrets)
        v = d.violations[0] if d.violations else None
        # the whole line in one literal, in FIELDS order (one event per proposed call)
        record: dict[str, Any] = {
            "event": DECISION_EVENT,
            "run_id": self.run_id,
            "step": d.step,
            "tool": d.tool,
            "args": safe_args(self.redact, d.tool, d.args),
            "constraint": None if v is None else v.constraint,
            "layer": None if v is None else v.layer,
            "weight": None if v is None else v.weight,
            "severity": None if v is None else str(v.severity),
            "verdict": None if v is None else "violated",
            "action": _ACTION_TEXT[d.action if d.shadow is None else d.shadow],
            "message": message,
            "spec": self.spec_name,
            "spec_hash": self.spec_hash,
            "timestamp": timestamp(),
            "violations": violations,
            "pending": list(d.pending),
            "escalated": d.escalated,
            "call_id": d.call_id,
            "tool_call_id": d.tool_call_id,
        }
        if d.shadow is not None:
            record["shadow"] = True
        if d.approval is not None:  # who approved or denied an ASK call, when, why
            reason = str(d.approval.get("reason", ""))
            if self.redact is not None:
                reason = scrub(reason, secret_texts(self.redact, d.tool, d.args))
            record["approval"] = {**d.approval, "reason": reason}
        self._send(record, d.action is not Action.ALLOW or v is not None, _DECISION_DATA)

    def result(self, call: Call, d: Decision | None) -> None:
        """An executed call entered the trace at ``call.position``."""
        if not (self.active or hooks.SINKS):
            return
        lines = self._lines
        if lines is not None and self.redact is None and not hooks.SINKS:
            chain = self._chain
            assert chain is not None  # the templates are dropped when the log closes
            line = lines.result(call, d, timestamp(), chain.seq, chain.head)
            if line is not None:
                self._write(line)
                chain.advance(line)
                if self._anchor is not None:
                    self._anchored(chain)
                return
        record: dict[str, Any] = {
            "event": RESULT_EVENT,
            "run_id": self.run_id,
            "step": None if d is None else d.step,
            "tool": call.name,
            "args": safe_args(self.redact, call.name, call.args),
            "constraint": None,
            "layer": None,
            "weight": None,
            "severity": None,
            "verdict": None,
            "action": "executed",
            "message": "",
            "spec": self.spec_name,
            "spec_hash": self.spec_hash,
            "timestamp": timestamp(),
            "violations": [],
            "pending": [],
            "call_id": None if d is None else d.call_id,
            "tool_call_id": None if d is None else d.tool_call_id,
            "is_error": call.error,
            "position": call.position,
        }
        if self.redact is None:
            record["result"] = call.result
        else:
            record["result_sha256"] = digest(call.result)
        self._send(record, call.error, _RESULT_DATA)

    def message(self, call: Call, *, judged: bool) -> None:
        """A dialogue event: at ``call.position`` of the trace when the spec ``judged`` it
        (names a dialogue event), else only recorded (position null)."""
        if not self.enabled:
            return
        self.emit(
            MESSAGE_EVENT,
            tool=call.name,
            kind=call.kind,
            args=safe_args(self.redact, call.name, call.args),
            action="observed",
            position=call.position if judged else None,
        )

    def withdrawn(self, d: Decision, reason: str) -> None:
        """An allowed call that never ran."""
        if not self.enabled:
            return
        self.emit(
            WITHDRAWN_EVENT,
            warn=True,
            step=d.step,
            tool=d.tool,
            args=safe_args(self.redact, d.tool, d.args),
            action="withdrawn",
            message=scrub(reason, secret_texts(self.redact, d.tool, d.args)),
            call_id=d.call_id,
            tool_call_id=d.tool_call_id,
        )

    def late(
        self,
        step: int,
        tool: str,
        args: Mapping[str, Any],
        violations: list[Violation],
        stopped: bool,
        *,
        shadow: bool = False,
    ) -> None:
        """A violation found when a result arrived; ``stopped``: it stops the run (in
        shadow mode: it would have, and the line says ``shadow: true``)."""
        if not self.enabled:
            return
        secrets = secret_texts(self.redact, tool, args)
        self.emit(
            LATE_EVENT,
            warn=True,
            step=step,
            tool=tool,
            args=safe_args(self.redact, tool, args),
            **_violation_fields(violations[0]),
            action=Action.STOP.value if stopped else "logged",
            message=scrub("; ".join(v.message or v.detail for v in violations), secrets),
            violations=violation_records(violations, secrets),
            pending=[],
            **({"shadow": True} if shadow and stopped else {}),
        )

    def emit(self, event: str, *, warn: bool = False, **fields: Any) -> None:
        """One event with the common fields; JSON line to the file, event to the user logger."""
        self._emit(event, fields, warn, USER_DATA if fields.keys() <= KNOWN else None)

    def _emit(
        self, event: str, fields: Mapping[str, Any], warn: bool, checked: tuple[str, ...] | None
    ) -> None:
        """:meth:`emit`, the fields given as a mapping; ``checked``: the fields that may
        hold non-JSON values (None: any field may)."""
        if not self.enabled:
            return
        record = self._common.copy()  # event first, then the common fields in FIELDS order
        record["event"] = event
        record["timestamp"] = timestamp()
        record["violations"], record["pending"] = [], []  # fresh: a user processor may append
        record.update(fields)
        self._send(record, warn, checked)

    def _send(self, record: dict[str, Any], warn: bool, checked: tuple[str, ...] | None) -> None:
        """One whole event (``event`` first): a JSON line to the file (``checked`` as for
        :meth:`_emit`), then the event to the user's logger and the sinks."""
        user, sinks = self._user, hooks.SINKS
        view: dict[str, Any] = {}
        if user is not None or sinks:  # their own copy, without the chain's fields
            view = record.copy()
        chain = self._chain
        if chain is not None:
            self._write(chain.encode(record, checked))
            if self._anchor is not None:
                self._anchored(chain)
        if user is not None:
            event = view.pop("event")
            (user.warning if warn else user.info)(event, **view)
            view = {"event": event, **view}
        if sinks:
            hooks.publish_event(view)

    def _anchored(self, chain: Chain) -> None:
        """The line just written is the run's head: the anchor keeps it."""
        assert self._anchor is not None
        if self._anchor_log is None and self.path is not None:  # (a chain needs a file)
            self._anchor_log = str(self.path.resolve())  # a witness may serve many logs
        self._anchor(ChainHead(self.run_id, chain.seq - 1, chain.head, self._anchor_log))

    def _write(self, data: bytes) -> None:
        """One line to the file: one write(2) of its bytes (a short write continues).

        After :meth:`close` (the run finished) a line still goes on the run's chain: the
        file is opened for it and closed again (a call refused after the end is logged,
        never lost)."""
        file = self._file
        if file is None:
            if self.path is None or self._chain is None:
                return
            with io.FileIO(self.path, "a") as late:
                _write_all(late, data)
            return
        if self._claim is not _CLAIMED:  # a restored run's first line: no fork of its chain
            assert self.path is not None
            continuing.claimed_write(file, data, self.path, self.run_id, self._claim)  # type: ignore[arg-type]
            self._claim = _CLAIMED
            return
        _write_all(file, data)

    def flush(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.flush()

    def close(self) -> None:
        """The run finished: the file is closed; its chain stays, so a line written after
        the end (a refused late call) continues it."""
        if self._file is not None and not self._file.closed:
            self._file.close()
        self._file = None
        self._lines = None


def _write_all(file: io.FileIO, data: bytes) -> None:
    written = file.write(data) or 0
    if written < len(data):  # a regular file takes it whole
        rest = memoryview(data)[written:]
        while rest:
            rest = rest[file.write(rest) or 0 :]


_CLAIMED: Final = object()
"""No first line of a restored run is pending (the log's own, or the claim was made)."""
_ACTION_TEXT: Final = {a: a.value for a in Action}
"""``action.value`` by lookup (an enum's ``value`` is a descriptor call)."""
_DECISION_DATA: Final = ("args", "violations", "approval")
"""The fields of a decision line that may hold non-JSON values (the rest are the
firewall's own strings, numbers, booleans and lists of them)."""
_RESULT_DATA: Final = ("args", "result")

_NO_VIOLATION: Final[Mapping[str, Any]] = {
    "constraint": None,
    "layer": None,
    "weight": None,
    "severity": None,
    "verdict": None,
}


def _violation_fields(v: Violation | None) -> Mapping[str, Any]:
    if v is None:
        return _NO_VIOLATION
    return {
        "constraint": v.constraint,
        "layer": v.layer,
        "weight": v.weight,
        "severity": str(v.severity),
        "verdict": "violated",
    }
