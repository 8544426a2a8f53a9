"""The Firewall's options as one typed record, for entries that pass them through.

``guard(agent, spec, **options)`` and every adapter forward their keyword options to
:class:`~agentguard.enforcement.firewall.Firewall`. Typing them as
``**options: Unpack[FirewallOptions]`` (PEP 692) lets mypy reject a misspelt option or a
wrong type at the call of ``guard()``, not at run time deep inside an adapter. Keep the
keys in step with ``Firewall.__init__`` (tests/enforcement/test_options.py checks it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from agentguard.enforcement.agent_tools import AgentTools
from agentguard.enforcement.approval import Approver
from agentguard.enforcement.log import Redactor
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity


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
    schema_severity: Severity | str
    start_timeout: float
    mode: str
    log_key: bytes | str | None
    otel: bool | None
    tracer_provider: Any
    approver: Approver | None
    ask_fallback: Severity | str
    on_budget: str
