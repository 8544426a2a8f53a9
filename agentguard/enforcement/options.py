"""The Firewall's options as one typed record, for entries that pass them through.

``guard(agent, spec, **options)`` and every adapter forward their keyword options to
:class:`~agentguard.enforcement.firewall.Firewall`. Typing them as
``**options: Unpack[FirewallOptions]`` (PEP 692) lets mypy reject a misspelt option or a
wrong type at the call of ``guard()``, not at run time deep inside an adapter. Keep the
keys in step with ``Firewall.__init__`` (tests/enforcement/test_options.py checks it).
The checks of the values live here too, beside the names they check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypedDict

from agentguard.enforcement.agent_tools import AgentTools
from agentguard.enforcement.approval import Approver
from agentguard.enforcement.log_anchor import Anchor
from agentguard.enforcement.log_redaction import Redactor
from agentguard.errors import AgentGuardError
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity, SeverityKind

PREDICATE_POLICIES: Final = ("fail_closed", "fail_open")
BUDGET_POLICIES: Final = ("warn", "stop")
MODES: Final = ("enforce", "shadow")
CHOICES: Final = {
    "mode": MODES,
    "on_budget": BUDGET_POLICIES,
    "on_predicate_error": PREDICATE_POLICIES,
}
"""The options that take one of a few names, and those names."""
SEVERITY_EXAMPLES: Final = {
    "schema_severity": "'SOFT_BLOCK' or 'SOFT_BLOCK(2)'",
    "ask_fallback": "'SOFT_BLOCK'",
}


@dataclass(frozen=True, slots=True)
class RecordsAgain:
    """``Firewall.restore(..., stale=RecordsAgain(calls))``: the caller continues a run
    from a state older than its log and records again, itself, the calls that ran after
    the state: those whose tool-call ids are ``calls`` (the conversation it resumes holds
    their answers: LangGraph resuming a thread from its last model turn's checkpoint). A
    call the log shows ran after the state under another id (a fork of an older
    checkpoint, whose conversation never saw it) refuses the restore: it would roll the
    run back."""

    calls: frozenset[str]


Stale = Literal["refuse"] | RecordsAgain
"""What ``Firewall.restore`` does with a state older than the run's log."""


class FirewallConfigError(AgentGuardError, ValueError):
    """A Firewall option has an invalid value."""


class FirewallOptions(TypedDict, total=False):
    """Keyword options of ``Firewall`` (every one optional; see docs/firewall.md)."""

    run_id: str | None
    log_path: str | Path | None
    logger: Any
    soft_block_limit: int
    final_tools: tuple[str, ...]
    max_finish_sendbacks: int
    on_predicate_error: str
    redact: Redactor | None
    registry: Registry | None
    enforce_tools: bool
    agent_tools: AgentTools | None
    strict_tools: bool
    schema_severity: Severity | str
    start_timeout: float
    mode: str
    log_key: bytes | str | None
    log_anchor: Anchor | None
    otel: bool | None
    tracer_provider: Any
    approver: Approver | None
    ask_fallback: Severity | str
    on_budget: str
    keep_trace: bool


def check_choices(**options: str) -> None:
    """Each named option is one of its :data:`CHOICES`."""
    for name, value in options.items():
        allowed = CHOICES[name]
        if value not in allowed:
            raise FirewallConfigError(f"{name} must be one of {allowed}, got {value!r}")


def check_limits(soft_block_limit: int, max_finish_sendbacks: int, start_timeout: float) -> None:
    if soft_block_limit < 0 or max_finish_sendbacks < 0:
        raise FirewallConfigError("soft_block_limit and max_finish_sendbacks must be >= 0")
    if start_timeout < 0:
        raise FirewallConfigError("start_timeout must be >= 0")


def severity_option(name: str, value: Severity | str) -> Severity:
    """A severity option given as a Severity or its text (``"SOFT_BLOCK(2)"``);
    ``ask_fallback`` is what an ASK falls back to, so it cannot be ASK itself."""
    if isinstance(value, str):
        try:
            value = Severity.parse(value)
        except ValueError:
            raise FirewallConfigError(
                f"{name} must be a severity such as {SEVERITY_EXAMPLES[name]}, got {value!r}"
            ) from None
    if name == "ask_fallback" and value.kind is SeverityKind.ASK:
        raise FirewallConfigError("ask_fallback must be a severity other than ASK")
    return value
