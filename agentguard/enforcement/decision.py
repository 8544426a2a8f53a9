"""What the firewall decides about one proposed call.

Leaf module: integrations import these types without pulling in the monitor.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agentguard.severity import Severity
from agentguard.trace.arguments import copy_arguments
from agentguard.trace.json_values import json_value


class Action(str, enum.Enum):
    """What happens to the proposed call."""

    ALLOW = "allow"  # execute (possibly with TOLERATE warnings logged)
    BLOCK = "block"  # do not execute; message goes back to the model
    STOP = "stop"  # do not execute; the run ends (HARD_STOP or escalated SOFT_BLOCK)
    OVERRIDE = "allow_override"  # BLOCK_AND_WARN insisted on with an identical retry: execute

    @property
    def executes(self) -> bool:
        return self in _EXECUTING


_EXECUTING: Final = frozenset((Action.ALLOW, Action.OVERRIDE))
"""The actions whose call runs (a set: asked once per proposed call)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One constraint definitively violated by the proposed call (or by ending now)."""

    constraint: str
    severity: Severity
    layer: str | None = None
    weight: float = 1.0
    message: str = ""
    detail: str = ""
    hint: str = ""  # what would satisfy the constraint, when the monitor can tell

    def to_dict(self) -> dict[str, Any]:
        return {
            "constraint": self.constraint,
            "severity": str(self.severity),
            "layer": self.layer,
            "weight": self.weight,
            "message": self.message,
            "detail": self.detail,
            "hint": self.hint,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Violation:
        """The inverse of :meth:`to_dict`."""
        return cls(
            d["constraint"],
            Severity.parse(d["severity"]),
            d.get("layer"),
            float(d.get("weight", 1.0)),
            d.get("message", ""),
            d.get("detail", ""),
            d.get("hint", ""),
        )


@dataclass(frozen=True, slots=True, init=False)
class Decision:
    """The firewall's answer to ``propose(name, args)``."""

    action: Action
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    step: int = 0
    violations: tuple[Violation, ...] = ()
    message: str = ""  # meant for the model: what was violated, why, what is pending
    pending: tuple[str, ...] = ()  # constraints still undecided (deferred obligations)
    escalated: bool = False  # a SOFT_BLOCK that reached its limit and became a STOP
    call_id: str = ""  # unique per proposal within a run: what start/complete/withdraw name
    tool_call_id: str | None = None  # the framework's own id (not unique), kept for logs
    # shadow mode: the refusal enforce mode would have made; the call runs anyway (ALLOW)
    shadow: Action | None = None
    # an ASK constraint's approver answered: {"approved", "by", "reason", "at"}
    approval: Mapping[str, Any] | None = None

    def __init__(
        self,
        action: Action,
        tool: str,
        args: Mapping[str, Any] | None = None,
        step: int = 0,
        violations: tuple[Violation, ...] = (),
        message: str = "",
        pending: tuple[str, ...] = (),
        escalated: bool = False,
        call_id: str = "",
        tool_call_id: str | None = None,
        shadow: Action | None = None,
        approval: Mapping[str, Any] | None = None,
    ) -> None:
        # One decision per proposed call: the generated frozen __init__ goes through
        # object.__setattr__ per field; the slots' own setters cost half as much.
        _SET_ACTION(self, action)
        _SET_TOOL(self, tool)
        _SET_ARGS(self, {} if args is None else args)
        _SET_STEP(self, step)
        _SET_VIOLATIONS(self, violations)
        _SET_MESSAGE(self, message)
        _SET_PENDING(self, pending)
        _SET_ESCALATED(self, escalated)
        _SET_CALL_ID(self, call_id)
        _SET_TOOL_CALL_ID(self, tool_call_id)
        _SET_SHADOW(self, shadow)
        _SET_APPROVAL(self, approval)

    @property
    def executes(self) -> bool:
        return self.action in _EXECUTING

    def arguments(self) -> dict[str, Any]:
        """A fresh copy of the arguments this decision checked: what an adapter hands the
        tool, so the value checked is the value the tool receives (and a tool changing
        its arguments in place cannot change the trace's record of them)."""
        return copy_arguments(self.args)

    @property
    def allowed(self) -> bool:
        return self.action in _EXECUTING

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "tool": self.tool,
            "args": json_value(dict(self.args)),  # as the log writes them (JSON data)
            "step": self.step,
            "violations": [v.to_dict() for v in self.violations],
            "message": self.message,
            "pending": list(self.pending),
            "escalated": self.escalated,
            "call_id": self.call_id,
            "tool_call_id": self.tool_call_id,
            "shadow": None if self.shadow is None else self.shadow.value,
            "approval": None if self.approval is None else dict(self.approval),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Decision:
        """The inverse of :meth:`to_dict`."""
        return cls(
            Action(d["action"]),
            d["tool"],
            dict(d.get("args", {})),
            int(d.get("step", 0)),
            tuple(Violation.from_dict(v) for v in d.get("violations", ())),
            d.get("message", ""),
            tuple(d.get("pending", ())),
            bool(d.get("escalated", False)),
            str(d.get("call_id", "")),
            d.get("tool_call_id"),
            None if d.get("shadow") is None else Action(d["shadow"]),
            None if d.get("approval") is None else dict(d["approval"]),
        )


def _slot_setter(name: str) -> Any:
    return vars(Decision)[name].__set__


_SET_ACTION: Final = _slot_setter("action")
_SET_TOOL: Final = _slot_setter("tool")
_SET_ARGS: Final = _slot_setter("args")
_SET_STEP: Final = _slot_setter("step")
_SET_VIOLATIONS: Final = _slot_setter("violations")
_SET_MESSAGE: Final = _slot_setter("message")
_SET_PENDING: Final = _slot_setter("pending")
_SET_ESCALATED: Final = _slot_setter("escalated")
_SET_CALL_ID: Final = _slot_setter("call_id")
_SET_TOOL_CALL_ID: Final = _slot_setter("tool_call_id")
_SET_SHADOW: Final = _slot_setter("shadow")
_SET_APPROVAL: Final = _slot_setter("approval")


class RunStopped(BaseException):
    """Raised to end an agent run on HARD_STOP; carries the firewall's :class:`Decision`.

    A ``BaseException`` (not an :class:`~agentguard.errors.AgentGuardError`) so that
    ``except Exception`` in an agent's own code, or in a model's generated code, cannot
    swallow it. It is a control-flow signal, not an error, and it lives here beside the
    decision it carries, so that ``agentguard.errors`` stays a leaf.
    """

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(decision.message)
