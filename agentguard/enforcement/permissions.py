"""What may run now: the answer :meth:`Firewall.permissions` gives before the model acts.

A frozen record per tool (refused, needs approval, allowed under conditions, free), the
obligations still open, and :meth:`Permissions.allows`, the answer's own reading of a
call. The answer only informs: ``propose`` still decides every call. It is exact where
the monitor is (a tool listed as refused is refused, whatever its arguments; a call
:meth:`Permissions.allows` is not refused by any constraint the answer covers) and
labelled where it is not (``exact=False`` with the reason): see docs/firewall.md,
"What may run now". Computed in :mod:`agentguard.enforcement.permitting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from agentguard.enforcement.decision import Action
from agentguard.language import ast as A
from agentguard.monitor.outlook import Outlook
from agentguard.severity import Severity
from agentguard.tools.arguments import signature
from agentguard.tools.checker import ToolChecker
from agentguard.trace.identity import value_key
from agentguard.trace.model import Call

Status = Literal["refused", "needs_approval", "conditional", "free"]

OTHER_TOOLS: Final = "*"
"""The key of the entry for every tool the answer does not list by name."""


@dataclass(frozen=True, slots=True)
class Condition:
    """A constraint a call to the tool violates unless its arguments pass ``when``.

    ``when`` is a disjunction of conjunctions of AgentLTL argument tests (``amount <=
    500``); empty when the condition is not known (``exact`` False, ``reason`` says why:
    such a constraint may refuse a call the answer cannot foresee). ``approval``: the
    constraint is ASK, so a violating call is held for a human, not refused.
    """

    constraint: str
    severity: Severity
    message: str
    when: tuple[tuple[str, ...], ...]
    exact: bool = True
    reason: str = ""
    approval: bool = False
    outlook: Outlook = field(default=Outlook("unknown"), compare=False, repr=False)

    @property
    def text(self) -> str:
        """``amount <= 500``; alternatives joined with ``or``."""
        if not self.exact:
            return f"not known before the call ({self.reason})"
        alts = [" & ".join(a) if a else "true" for a in self.when]
        if len(alts) == 1:
            return alts[0]
        return " or ".join(f"({a})" for a in alts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "constraint": self.constraint,
            "severity": str(self.severity),
            "message": self.message,
            "when": [list(a) for a in self.when],
            "exact": self.exact,
            "reason": self.reason,
            "approval": self.approval,
        }


@dataclass(frozen=True, slots=True)
class Declared:
    """What the tool's declaration asks of the arguments, frozen at the answer's time:
    its signature, the values each ``from`` argument may take (seen so far) and whether
    its ``requires`` precondition holds now (``"holds"``, ``"fails"``, or ``"depends"``
    on the call's own arguments)."""

    decl: A.ToolDecl
    one_of: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    requires: Literal["holds", "fails", "depends", "none"] = "none"

    @property
    def signature(self) -> str:
        return signature(self.decl)

    def allows(self, args: Mapping[str, Any]) -> bool:
        """Does a call with ``args`` pass the declaration's checks, as the answer knows?"""
        params = self.decl.params
        if not args and all(p.optional for p in params):
            return True  # the checker accepts a bare call of such a tool as it is
        bare = A.ToolDecl(
            self.decl.name,
            tuple(replace(p, source=None) for p in params),
            allow_extra=self.decl.allow_extra,
        )
        if ToolChecker([bare], implicit=()).check(self.decl.name, args, ()):
            return False
        for name, values in self.one_of:
            if name not in args or args[name] is None:
                continue
            value = args[name]
            seen = {value_key(v) for v in values}
            items = value if isinstance(value, (list, tuple)) else [value]
            if any(value_key(v) not in seen for v in items):
                return False
        return self.requires in ("holds", "none")

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "one_of": {n: list(v) for n, v in self.one_of},
            "requires": self.requires,
        }


@dataclass(frozen=True, slots=True)
class ToolPermission:
    """One tool's standing now.

    ``refused``: ``propose`` refuses every call to it (``action``: BLOCK, or STOP when the
    call would end the run; ``constraints`` say which); ``needs_approval``: an ASK
    constraint holds every call for a human; ``conditional``: the ``conditions`` say
    which arguments pass; ``free``: no constraint refuses any call to it. The tool's
    ``declaration`` (when the spec declares tools) applies in every case. ``exact``:
    every part of this entry is exact. ``doomed``: a call to it now, whatever its
    arguments, would run but leave no continuation that satisfies every constraint,
    and why (``enforcement/doomed.py``; "" when the answer sees no such conflict).
    """

    tool: str
    status: Status
    action: Action | None = None
    constraints: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    declaration: Declared | None = None
    exact: bool = True
    reason: str = ""
    doomed: str = ""

    def allows(self, args: Mapping[str, Any]) -> bool:
        """Would the answer let a call with ``args`` run (never a refused tool, never one
        needing approval, never one a conservative condition may refuse)?"""
        if self.status in ("refused", "needs_approval"):
            return False
        if self.declaration is not None and not self.declaration.allows(args):
            return False
        call = Call.proposed(self.tool, dict(args))
        return all(c.exact and c.outlook.admits(call) for c in self.conditions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "status": self.status,
            "action": None if self.action is None else self.action.value,
            "constraints": list(self.constraints),
            "conditions": [c.to_dict() for c in self.conditions],
            "declaration": None if self.declaration is None else self.declaration.to_dict(),
            "exact": self.exact,
            "reason": self.reason,
            "doomed": self.doomed,
        }


@dataclass(frozen=True, slots=True)
class Obligation:
    """A constraint still open: ending the run now would leave it unsatisfied
    (``certain``) or may (its truth hangs on results still to come)."""

    constraint: str
    severity: Severity
    message: str
    hint: str
    certain: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "constraint": self.constraint,
            "severity": str(self.severity),
            "message": self.message,
            "hint": self.hint,
            "certain": self.certain,
        }


@dataclass(frozen=True, slots=True)
class Permissions:
    """What may run now (see the module docstring): ``tools`` by name, ``other`` for any
    tool not listed, ``obligations`` still open. ``mode`` is the firewall's: in shadow
    mode nothing is refused and the answer says what enforce mode would do."""

    run_id: str
    position: int
    mode: str
    tools: tuple[ToolPermission, ...]
    other: ToolPermission
    obligations: tuple[Obligation, ...] = ()
    stopped: bool = False

    def __getitem__(self, tool: str) -> ToolPermission:
        for t in self.tools:
            if t.tool == tool:
                return t
        return ToolPermission(
            tool,
            self.other.status,
            self.other.action,
            self.other.constraints,
            self.other.conditions,
            self.other.declaration,
            self.other.exact,
            self.other.reason,
        )

    @property
    def exact(self) -> bool:
        return all(t.exact for t in self.tools) and self.other.exact

    def _with(self, *status: Status) -> tuple[str, ...]:
        return tuple(t.tool for t in self.tools if t.status in status)

    @property
    def refused(self) -> tuple[str, ...]:
        return self._with("refused")

    @property
    def needs_approval(self) -> tuple[str, ...]:
        return self._with("needs_approval")

    @property
    def conditional(self) -> tuple[str, ...]:
        return self._with("conditional")

    @property
    def free(self) -> tuple[str, ...]:
        return self._with("free")

    @property
    def offered(self) -> tuple[str, ...]:
        """The tools worth offering the model: every one not refused and not doomed."""
        return tuple(
            t for t in self._with("free", "conditional", "needs_approval") if not self[t].doomed
        )

    @property
    def doomed(self) -> tuple[str, ...]:
        """The tools a call of which now would run and leave the run no compliant end."""
        return tuple(t.tool for t in self.tools if t.doomed)

    def allows(self, name: str, args: Mapping[str, Any] | None = None) -> bool:
        """Does the answer let ``name(args)`` run? (``propose`` still decides.)"""
        return self[name].allows(args or {})

    def describe(self, tools: tuple[str, ...] | None = None) -> str:
        """The answer as text for the model's prompt (only ``tools``, when given)."""
        return describe(self, tools)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "position": self.position,
            "mode": self.mode,
            "stopped": self.stopped,
            "exact": self.exact,
            "tools": [t.to_dict() for t in self.tools],
            "other": self.other.to_dict(),
            "obligations": [o.to_dict() for o in self.obligations],
        }


# ---------------------------------------------------------------- text for the model
HEADER = "agentguard: what may run now (every call is still checked)."
SHADOW = "agentguard (shadow mode, nothing is refused): what enforce mode would allow now."


def describe(answer: Permissions, tools: tuple[str, ...] | None = None) -> str:
    """Lines for the model; ``tools`` restricts the listing to the tools it is offered."""
    entries = [answer[t] for t in tools] if tools is not None else list(answer.tools)
    lines = [SHADOW if answer.mode == "shadow" else HEADER]
    refused = [t for t in entries if t.status == "refused"]
    if refused:
        lines.append("- Refused now: " + "; ".join(_refusal(t) for t in refused) + ".")
    doomed = [t for t in entries if t.doomed and t.status != "refused"]
    if doomed:
        lines.append(
            "- Allowed, but no compliant run would follow: "
            + "; ".join(f"{t.tool} ({t.doomed})" for t in doomed)
            + "."
        )
        entries = [t for t in entries if not t.doomed]
    asking = [t.tool for t in entries if t.status == "needs_approval"]
    if asking:
        lines.append("- Needs a human's approval: " + ", ".join(asking) + ".")
    for t in entries:
        if t.status == "conditional":
            lines.append(f"- {t.tool} only if: {conditions(t)}.")
    free = [t.tool for t in entries if t.status == "free"]
    if free:
        lines.append("- Allowed: " + ", ".join(free) + ".")
    if tools is None and answer.other.status == "refused":
        lines.append("- Any other tool is refused.")
    if answer.obligations:
        todo = [o.hint or f"satisfy {o.constraint}" for o in answer.obligations if o.certain]
        if todo:
            lines.append("- Before finishing: " + "; ".join(todo) + ".")
    return "\n".join(lines)


def conditions(t: ToolPermission) -> str:
    """What a call to ``t`` must satisfy, joined with ``and``."""
    parts = [c.text if c.exact else f"{c.constraint} allows it" for c in t.conditions]
    if t.declaration is not None:
        for name, values in t.declaration.one_of:
            shown = ", ".join(repr(v) for v in values[:20])
            parts.append(f"{name} one of [{shown}]")
        if t.declaration.requires == "depends":
            parts.append(f"the precondition of {t.tool} holds")
    return " and ".join(parts) if parts else "its arguments fit its declaration"


def _refusal(t: ToolPermission) -> str:
    why = ", ".join(t.constraints) or t.reason
    return f"{t.tool} ({why})" if why else t.tool


__all__ = [
    "HEADER",
    "OTHER_TOOLS",
    "SHADOW",
    "Condition",
    "Declared",
    "Obligation",
    "Permissions",
    "Status",
    "ToolPermission",
    "conditions",
    "describe",
]
