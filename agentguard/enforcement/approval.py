"""Human approval for the ``ASK`` severity: the request, the answer, calling the approver.

``ASK`` is an extension beyond the four severities of AgentLTL Appendix A.5.3: a call
that would violate an ``ASK`` constraint is held and put to an *approver*, a callable
given to the Firewall or ``guard()`` (sync, or async returning an awaitable). Approved,
the call runs and the log records who approved it and when; denied, it is refused with
the approver's reason. The firewall's policy function decides when to ask
(:func:`agentguard.enforcement.policy.judge`); this module only carries the question and
the answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentguard.enforcement.decision import Violation
from agentguard.errors import AgentGuardError


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the approver is asked: this call would violate these ``ASK`` constraints."""

    run_id: str
    call_id: str
    tool: str
    args: Mapping[str, Any]
    violations: tuple[Violation, ...]
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "args": dict(self.args),
            "violations": [v.to_dict() for v in self.violations],
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Approval:
    """The approver's answer; ``at`` defaults to when it was given (UTC, ISO 8601)."""

    approved: bool
    by: str = ""
    reason: str = ""
    at: str = field(default_factory=_now)

    def to_dict(self) -> dict[str, Any]:
        return {"approved": self.approved, "by": self.by, "reason": self.reason, "at": self.at}

    @classmethod
    def from_value(cls, value: Any) -> Approval:
        """An answer given as an Approval, a bool, or a mapping (``{"approved": true,
        "by": "alice", "reason": "..."}``, what a LangGraph ``Command(resume=...)`` carries)."""
        if isinstance(value, Approval):
            return value
        if isinstance(value, bool):
            return cls(value)
        if isinstance(value, Mapping) and isinstance(value.get("approved"), bool):
            extra = {k: str(value[k]) for k in ("by", "reason", "at") if value.get(k) is not None}
            return cls(bool(value["approved"]), **extra)
        raise ApprovalError(
            f"an approver must answer with an Approval, a bool or "
            f'{{"approved": bool, "by": ..., "reason": ...}}, got {value!r}'
        )


Approver = Callable[[ApprovalRequest], "Approval | bool | Mapping[str, Any] | Awaitable[Any]"]
"""``approver(request) -> Approval | bool | {"approved": ...}`` (or an awaitable of one)."""


class ApprovalError(AgentGuardError, ValueError):
    """The approver answered with something that is not an approval."""


class ApproverRaised(Exception):
    """Carries an exception the approver raised (a LangGraph interrupt, a timeout) through
    the firewall, which re-raises the original without logging it as an internal error."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def ask(approver: Approver, request: ApprovalRequest) -> Approval:
    """Put ``request`` to ``approver`` and wait for the answer (an async approver is run
    to completion: on a fresh event loop, or in a worker thread if this thread already
    runs one)."""
    try:
        answer = approver(request)
        if inspect.isawaitable(answer):
            answer = _wait(answer)
    except Exception as exc:
        raise ApproverRaised(exc) from exc
    return Approval.from_value(answer)


def _wait(awaitable: Awaitable[Any]) -> Any:
    async def run() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # this thread's loop is busy
        return pool.submit(asyncio.run, run()).result()


__all__ = [
    "Approval",
    "ApprovalError",
    "ApprovalRequest",
    "Approver",
    "ApproverRaised",
    "ask",
]
