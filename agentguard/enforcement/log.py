"""Structured decision logs: one structlog event per decision, JSON lines to a file
and/or into the user's own structlog pipeline.

Field names are stable (tests pin them): ``event run_id step tool args constraint layer
weight severity verdict action message spec spec_hash timestamp`` plus ``violations``
(every violated constraint) and ``pending``. The file logger writes and flushes every
line, so nothing is lost on a HARD_STOP or an exception.
"""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Final

import structlog

from agentguard.enforcement import hooks
from agentguard.enforcement.decision import Action, Decision, Violation

Redactor = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]
"""``redact(tool, args) -> args``: what the log may show of a call's arguments."""

DECISION_EVENT: Final = "agentguard.decision"
LATE_EVENT: Final = "agentguard.late_violation"
ERROR_EVENT: Final = "agentguard.predicate_error"
FINISH_EVENT: Final = "agentguard.finish"
FAILURE_EVENT: Final = "agentguard.internal_error"

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


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


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
    ) -> None:
        self.run_id = run_id
        self.spec_name = spec_name
        self.spec_hash = spec_hash
        self.path = Path(path) if path is not None else None
        self.redact = redact
        self._user = logger
        self._file: IO[str] | None = None
        self._file_logger: Any = None
        if self.path is not None:
            self._open()

    def _open(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")
        weakref.finalize(self, self._file.close)  # a run abandoned without finish() leaks nothing
        self._file_logger = structlog.wrap_logger(
            structlog.WriteLogger(self._file),
            processors=[structlog.processors.JSONRenderer(default=str)],
        )

    @property
    def enabled(self) -> bool:
        return self._file_logger is not None or self._user is not None or bool(hooks.SINKS)

    def safe_args(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if self.redact is None:
            return dict(args)
        try:
            return dict(self.redact(tool, args))
        except Exception as exc:  # noqa: BLE001 - a broken redactor must not leak the arguments
            return {"<redaction failed>": type(exc).__name__}

    def decision(self, d: Decision) -> None:
        if not self.enabled:
            return
        primary = d.violations[0] if d.violations else None
        self.emit(
            DECISION_EVENT,
            warn=d.action is not Action.ALLOW or bool(d.violations),
            step=d.step,
            tool=d.tool,
            args=self.safe_args(d.tool, d.args),
            **_violation_fields(primary),
            action=d.action.value,
            message=d.message,
            violations=[v.to_dict() for v in d.violations],
            pending=list(d.pending),
            escalated=d.escalated,
        )

    def late(
        self,
        step: int,
        tool: str,
        args: Mapping[str, Any],
        violations: list[Violation],
        stopped: bool,
    ) -> None:
        if not self.enabled:
            return
        self.emit(
            LATE_EVENT,
            warn=True,
            step=step,
            tool=tool,
            args=self.safe_args(tool, args),
            **_violation_fields(violations[0]),
            action=Action.STOP.value if stopped else "logged",
            message="; ".join(v.message or v.detail for v in violations),
            violations=[v.to_dict() for v in violations],
            pending=[],
        )

    def emit(self, event: str, *, warn: bool = False, **fields: Any) -> None:
        """One event with the common fields; JSON line to the file, event to the user logger."""
        if not self.enabled:
            return
        record: dict[str, Any] = {
            "run_id": self.run_id,
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
            "spec": self.spec_name,
            "spec_hash": self.spec_hash,
            "timestamp": _now(),
            "violations": [],
            "pending": [],
        }
        record.update(fields)
        if self._file_logger is not None:
            self._file_logger.info(event, **record)
        if self._user is not None:
            (self._user.warning if warn else self._user.info)(event, **record)
        if hooks.SINKS:
            hooks.publish_event({"event": event, **record})

    def flush(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.close()
        self._file_logger = None


def _violation_fields(v: Violation | None) -> dict[str, Any]:
    if v is None:
        return {
            "constraint": None,
            "layer": None,
            "weight": None,
            "severity": None,
            "verdict": None,
        }
    return {
        "constraint": v.constraint,
        "layer": v.layer,
        "weight": v.weight,
        "severity": str(v.severity),
        "verdict": "violated",
    }
