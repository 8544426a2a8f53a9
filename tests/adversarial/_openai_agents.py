"""What the OpenAI Agents adversarial tests share: real function tools that note what
their bodies received, a scripted agent, the SDK's approval loop, and the two
invariants every scenario checks (the trace is what ran; online = offline)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents")
from agents import Agent, Runner, function_tool, set_tracing_disabled  # noqa: E402

import agentguard  # noqa: E402
from agentguard.enforcement.audit import verify_lines  # noqa: E402
from agentguard.enforcement.report import FirewallReport  # noqa: E402
from agentguard.language import ast as A  # noqa: E402
from agentguard.scoring import verify_trace  # noqa: E402
from agentguard.testing.openai_agents_models import ScriptedAgentsModel  # noqa: E402
from agentguard.trace import load_traces  # noqa: E402
from agentguard.trace.loaders import iter_trace_file  # noqa: E402


@pytest.fixture(autouse=True)
def sdk_defaults() -> Iterator[None]:
    """No trace export to OpenAI; the loop Runner.run_sync reuses is ours, closed after."""
    set_tracing_disabled(True)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.close()
    asyncio.set_event_loop_policy(None)


class Shop:
    """Real function tools; ``ran`` lists each body that ran with what it received."""

    def __init__(self, *, approval: tuple[str, ...] = ()) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

        def note(name: str, **received: Any) -> None:
            self.ran.append((name, received))

        @function_tool(needs_approval="verify_identity" in approval)
        def verify_identity(customer_id: str) -> dict[str, Any]:
            """Check the customer's identity."""
            note("verify_identity", customer_id=customer_id)
            return {"customer_id": customer_id, "verified": True}

        @function_tool(needs_approval="issue_refund" in approval)
        def issue_refund(order_id: str, amount: float) -> str:
            """Refund an order."""
            note("issue_refund", order_id=order_id, amount=amount)
            return f"refunded {amount} on {order_id}"

        @function_tool(needs_approval="wipe" in approval)
        def wipe(path: str, force: bool = True) -> str:
            """Delete a folder."""
            note("wipe", path=path, force=force)
            return f"wiped {path}"

        self.verify_identity = verify_identity
        self.issue_refund = issue_refund
        self.wipe = wipe
        self.tools = [verify_identity, issue_refund, wipe]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.ran]


SHOP_TOOLS = frozenset({"verify_identity", "issue_refund", "wipe"})


def scripted(shop: Shop, script: list[Any], *, name: str = "support", **kwargs: Any) -> Any:
    """An agent with ``shop``'s tools answering from ``script``."""
    return Agent(
        name=name,
        instructions="help",
        tools=list(shop.tools),
        model=ScriptedAgentsModel(script),
        **kwargs,
    )


async def run_approving(agent: Any, task: str, *, approve: bool = True, **kwargs: Any) -> Any:
    """``Runner.run`` and, while the run pauses for approvals, answer them all (approve or
    reject) and resume it with its state: the SDK's human-in-the-loop loop."""
    result = await Runner.run(agent, task, **kwargs)
    while result.interruptions:
        state = result.to_state()
        for item in result.interruptions:
            if approve:
                state.approve(item)
            else:
                state.reject(item)
        result = await Runner.run(agent, state, **kwargs)
    return result


def log_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def assert_invariants(
    shop: Shop | None,
    report: FirewallReport | None,
    spec: A.Spec,
    log: Path,
    tmp_path: Path,
) -> None:
    """The trace is what ran (every shop body that ran, with what it received, in order;
    no other shop call); online = offline (the report equals ``verify_trace`` of the trace loaded
    from the exported report and from the decision log); the log's chain verifies with
    every run finished."""
    assert report is not None
    if shop is not None:
        tools = [(c.name, dict(c.args)) for c in report.trace if c.name in SHOP_TOOLS]
        assert tools == shop.ran
    exported = tmp_path / f"report-{report.run_id}.json"
    exported.write_text(json.dumps(report.to_dict(), default=str))
    (from_report,) = list(iter_trace_file(exported))
    lines = log_lines(log)  # a log record is named by its first line: the run's id there
    from_log = [t for t in load_traces(log) if lines[t.record - 1]["run_id"] == report.run_id]
    assert len(from_log) == 1
    for loaded in (from_report, from_log[0]):
        assert loaded.trace is not None
        assert loaded.trace.names == report.trace.names
        assert [dict(c.args) for c in loaded.trace] == [dict(c.args) for c in report.trace]
        assert verify_trace(loaded.trace, spec).to_dict() == report.compliance.to_dict()
    audit = verify_lines(log.read_text().splitlines(), require_finish=True)
    assert audit.ok, audit


def guarded(agent: Any, spec: A.Spec, log: Path, **options: Any) -> Any:
    return agentguard.guard(agent, spec, log_path=log, **options)


__all__ = [
    "Shop",
    "assert_invariants",
    "function_tool",
    "guarded",
    "log_lines",
    "run_approving",
    "scripted",
]
