"""One client session's run, as the MCP gateway keeps it: the one seam between the gateway
and the firewall, and what the gateway itself writes of the run (its report line, its own
messages on stderr), under the firewall's redactor as the decision log is.

The decision log redacts by one rule (``agentguard.enforcement.log``): arguments through
the redactor, results replaced by their digest (``result_sha256``), and every text that
can quote an argument (messages, violation details and hints, errors) with each value the
redactor hid replaced by ``[redacted]``. :class:`Scrubber` applies the same rule to the
report line and to the gateway's messages, so a redactor keeps a secret out of every file
and stream the gateway writes, not only out of the log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentguard.enforcement.decision import Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.log_redaction import Redactor, safe_args, scrub, secret_texts
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import MissingExtraError
from agentguard.trace.identity import digest

try:
    import anyio
    import anyio.to_thread
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

log = logging.getLogger("agentguard.mcp")


class Scrubber:
    """What a redactor lets the gateway write of a call (see the module docstring)."""

    def __init__(self, redact: Redactor | None) -> None:
        self.redact = redact

    def args(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        return safe_args(self.redact, tool, args)

    def secrets(self, calls: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
        """The text forms of every argument value the redactor hid, longest first."""
        hidden = {text for tool, args in calls for text in secret_texts(self.redact, tool, args)}
        return sorted(hidden, key=len, reverse=True)

    def text(self, text: str, secrets: Sequence[str]) -> str:
        return scrub(text, secrets)

    def report(self, report: FirewallReport) -> dict[str, Any]:
        """``report.to_dict()`` as the decision log would show it."""
        out = report.to_dict()
        if self.redact is None:
            return out
        calls = [(d.tool, d.args) for d in report.decisions]
        secrets = self.secrets([*calls, *((c.name, c.args) for c in report.trace)])
        for key in ("decisions", "would_block"):
            for d in out[key]:
                d["args"] = self.args(d["tool"], d["args"])
                d["message"] = self.text(d["message"], secrets)
                self._violations(d["violations"], secrets)
                if d.get("approval"):
                    d["approval"]["reason"] = self.text(str(d["approval"]["reason"]), secrets)
        self._violations(out["late_violations"], secrets)
        for record in out["trace"]:
            record["arguments"] = self.args(record["tool_name"], record["arguments"])
            if "tool_result" in record:
                record["result_sha256"] = digest(record.pop("tool_result"))
        compliance = out["compliance"]
        compliance["details"] = self.text(compliance["details"], secrets)
        for constraint in compliance["constraints"]:
            constraint["detail"] = self.text(constraint["detail"], secrets)
        return out

    def _violations(self, violations: list[dict[str, Any]], secrets: Sequence[str]) -> None:
        for v in violations:
            for key in ("message", "detail", "hint"):
                v[key] = self.text(v[key], secrets)


def _printable(text: str) -> str:
    """``text`` with control characters escaped: a tool name or a server's error message
    must not move the cursor or clear the terminal that shows the proxy's stderr."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


class GatewaySession:
    """One client session's run: propose, start, then ran or withdrawn; finish.

    The only place the gateway talks to the firewall. ``start`` may wait for calls it
    relied on to finish, so it runs in a worker thread, never blocking the event loop
    those calls finish on. ``say`` is how the gateway speaks of one of its calls on
    stderr, scrubbed of what the redactor hides.
    """

    def __init__(self, key: str, firewall: Firewall, scrub: Scrubber) -> None:
        self.key = key
        self.firewall = firewall
        self.scrub = scrub
        self.report: FirewallReport | None = None

    def propose(self, name: str, args: Mapping[str, Any], call_id: str | None) -> Decision:
        return self.firewall.propose(name, args, tool_call_id=call_id)

    async def start(self, decision: Decision, *, alone: bool = False) -> Decision:
        """The decision to act on now that the call is about to be forwarded. ``alone``:
        no other call of the run was in flight since it was proposed, so its approval
        relied on none and ``start`` cannot wait: it runs here, without a thread hop."""
        if alone:
            return self.firewall.start(decision)
        started: Decision = await anyio.to_thread.run_sync(self.firewall.start, decision)
        return started

    def ran(self, decision: Decision, result: Any, *, error: str | None = None) -> None:
        if self.report is not None:  # ended by the gateway's owner meanwhile (end_session)
            late = "finished after its run ended (the log has it as unfinished)"
            self.say(logging.ERROR, decision, f"{decision.tool} {late}")
            return
        self.firewall.complete(decision, result, error=error)

    def withdrawn(self, decision: Decision, reason: str, *, started: bool = False) -> None:
        if self.report is None:  # else the finish withdrew it already, saying why
            self.firewall.withdraw(decision, reason, started=started)
        self.say(logging.WARNING, decision, f"{decision.tool} did not run: {reason}")

    def say(self, level: int, decision: Decision, text: str) -> None:
        secrets = self.scrub.secrets([(decision.tool, decision.args)])
        said = _printable(self.scrub.text(text, secrets))
        log.log(level, "agentguard: session %s: %s", _printable(self.key), said)

    @property
    def stopped(self) -> bool:
        return self.firewall.stopped

    def finish(self) -> FirewallReport:
        if self.report is None:
            self.report = self.firewall.finish()
        return self.report


__all__ = ["GatewaySession", "Scrubber"]
