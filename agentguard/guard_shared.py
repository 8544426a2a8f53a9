"""What ``guard()``, :class:`~agentguard.guard.GuardSession` and every framework adapter
share: the options they accept, the errors they raise when guarding, and the texts a
model is told when a call is refused. A leaf beside the session, so the adapters'
modules import this vocabulary without the session's machinery.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from agentguard.enforcement.agent_tools import check_at_guard
from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.offering import Offer
from agentguard.enforcement.options import FirewallOptions
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.refusal import refusal_text

if TYPE_CHECKING:
    from agentguard.enforcement.firewall import Firewall

FirewallFactory = Callable[[], "Firewall"]
"""Builds a fresh firewall for a run; the adapters default to ``Firewall(spec, **kwargs)``."""

DecisionListener = Callable[[Decision], None]
"""Called with every decision as it is made (the demo prints them live)."""

EXECUTING: Final = frozenset(a for a in Action if a.executes)
"""The actions whose call runs: ``decision.action in EXECUTING`` is
``decision.executes`` without its property call (the per-call paths ask it)."""


class GuardOptions(FirewallOptions, total=False):
    """What ``guard()`` and the session-based adapters accept: the Firewall's options plus
    the session's own (a factory for the firewall, a listener for each decision)."""

    firewall_factory: FirewallFactory | None
    on_decision: DecisionListener | None
    offer: Offer | None  # tell the model what may run now (enforcement/offering.py)


class UnsupportedAgentError(AgentGuardError, TypeError):
    """``guard`` was given an object it has no adapter for."""


class AlreadyGuardedError(AgentGuardError, ValueError):
    """The agent already carries a guard; guarding twice would check every call twice."""


def stop_decision(tool: str, args: Mapping[str, Any], violations: Sequence[Violation]) -> Decision:
    """A STOP for violations only visible once a result was known (``record`` found them)."""
    message = "; ".join(v.message or v.constraint for v in violations)
    return Decision(Action.STOP, tool, dict(args), violations=tuple(violations), message=message)


def blocked_text(decision: Decision) -> str:
    """What the model is told when a call is blocked or the run is stopped.

    The text starts with the refusal marker line (:mod:`agentguard.trace.refusal`), the
    one a transcript reader knows a call that never ran by. The firewall's own message is
    meant for the model and follows the marker as it is; a bare decision (no message)
    gets one built from its violations.
    """
    stopped = decision.action is Action.STOP
    if decision.message.startswith("agentguard"):
        return refusal_text(decision.message, stopped=stopped)
    reason = decision.message or "; ".join(
        v.message or f"constraint {v.constraint} forbids it" for v in decision.violations
    )
    return refusal_text(f"{decision.tool}: {reason or 'the spec forbids it'}", stopped=stopped)


__all__ = [
    "EXECUTING",
    "AlreadyGuardedError",
    "DecisionListener",
    "FirewallFactory",
    "GuardOptions",
    "UnsupportedAgentError",
    "blocked_text",
    "stop_decision",
]


def check_agent_tools(spec: SpecLike, options: FirewallOptions) -> A.Spec:
    """The spec ``guard()`` was given, read now, and compared with the agent's tools when
    the adapter put them in ``options["agent_tools"]``: a spec naming ``get_user_detail``
    while the agent has ``get_user_details`` is reported at the ``guard()`` line (a
    ``ToolMismatchWarning`` naming the closest tool), not when a run starts; with
    ``strict_tools=True`` it is a ``ToolMismatchError`` there. The tools are handed on
    marked as reported (``options`` is updated): each run's firewall logs the differences
    in its own log without warning again."""
    read = coerce_spec(spec, options.get("registry"))
    tools = options.get("agent_tools")
    if tools is not None:
        options["agent_tools"] = check_at_guard(
            read,
            tools,
            strict=options.get("strict_tools", False),
            final_tools=options.get("final_tools", FINAL_TOOLS),
        )
    return read
