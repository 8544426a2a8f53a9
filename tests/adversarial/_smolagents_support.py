"""What the smolagents adversarial tests share: tools that note exactly what they were
handed, the spec they run under, agents driven by scripted models, and the two
invariants every scenario must keep (the trace is what ran; online = offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smolagents import CodeAgent, Tool, ToolCallingAgent, tool

from agentguard.guard import GuardSession, guard
from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.scoring.verify import verify_trace
from agentguard.testing.smolagents_models import ScriptedModel
from agentguard.trace.loaders import load_traces

if (
    TYPE_CHECKING
):  # mypy reads integrations/ as a top-level package (tests/integrations/adapters.py)
    from integrations.smolagents import ExposedToolsError, ToolCallBlocked
else:
    from agentguard.integrations.smolagents import ExposedToolsError, ToolCallBlocked

RAN: list[tuple[str, dict[str, Any]]] = []
"""Every tool body that ran, with the arguments it was handed (their types kept)."""

SPEC: Spec = parse_spec(
    """
spec adversarial_smolagents
constraint one_refund severity HARD_STOP := CalledN(refund, 1, <=)
constraint no_rm severity HARD_STOP := G !shell(cmd ~ /rm/)
constraint no_force severity HARD_STOP := G !delete(force = true)
constraint no_ceo severity HARD_STOP := G !send_email(to = "ceo@corp.com")
constraint no_wipe severity SOFT_BLOCK(9) := G !wipe
constraint no_secret severity SOFT_BLOCK(9) := G !final_answer(answer ~ /secret/)
"""
)


def ran(name: str, **arguments: Any) -> None:
    RAN.append((name, arguments))


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def shell(cmd: str) -> str:
    """Run a shell command.

    Args:
        cmd: The command.
    """
    ran("shell", cmd=cmd, text=str(cmd), kind=type(cmd).__name__)
    return f"ran {cmd}"


@tool  # type: ignore[untyped-decorator]
def delete(path: str, force: bool = True) -> str:
    """Delete a path.

    Args:
        path: The path.
        force: Delete even if in use.
    """
    ran("delete", path=path, force=force)
    return f"deleted {path}"


@tool  # type: ignore[untyped-decorator]
def refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order.
    """
    ran("refund", order_id=order_id)
    return f"refunded {order_id}"


@tool  # type: ignore[untyped-decorator]
def send_email(to: str, meta: list | None = None) -> str:  # type: ignore[type-arg]
    """Send an email.

    Args:
        to: The recipient.
        meta: Anything attached.
    """
    ran("send_email", to=to, meta=meta)
    return f"sent to {to}"


@tool  # type: ignore[untyped-decorator]
def keep(items: list) -> list:  # type: ignore[type-arg]
    """Keep some items; returns the list kept.

    Args:
        items: The items.
    """
    ran("keep", items=list(items))
    items.append("added by the tool")  # a tool changing what it was handed
    return ["kept", *items]


@tool  # type: ignore[untyped-decorator]
def wipe() -> str:
    """Wipe everything."""
    ran("wipe")
    return "wiped"


class Transfer(Tool):  # type: ignore[misc]  # smolagents ships no type information
    """A tool whose ``inputs`` list its parameters in another order than ``forward``."""

    name = "transfer"
    description = "Move money."
    inputs = {  # noqa: RUF012 - smolagents reads a class attribute
        "to_account": {"type": "string", "description": "Where to."},
        "from_account": {"type": "string", "description": "Where from."},
    }
    output_type = "string"

    def forward(self, from_account: str, to_account: str) -> str:
        ran("transfer", from_account=from_account, to_account=to_account)
        return "moved"


TOOLS = [shell, delete, refund, send_email, keep, wipe]


def code_agent(
    script: list[Any],
    tmp_path: Path,
    *,
    tools: list[Any] | None = None,
    log_key: str | None = None,
    **kwargs: Any,
) -> CodeAgent:
    """A CodeAgent on the scripted ``script``, guarded by :data:`SPEC` with a log."""
    agent = CodeAgent(
        tools=TOOLS if tools is None else tools,
        model=ScriptedModel(script),
        verbosity_level=-1,
        max_steps=kwargs.pop("max_steps", 6),
        **kwargs,
    )
    return guard(agent, SPEC, log_path=tmp_path / "decisions.jsonl", log_key=log_key)


def tool_agent(
    script: list[Any], tmp_path: Path, *, tools: list[Any] | None = None, **kwargs: Any
) -> ToolCallingAgent:
    """A ToolCallingAgent on the scripted ``script``, guarded by :data:`SPEC` with a log."""
    agent = ToolCallingAgent(
        tools=TOOLS if tools is None else tools,
        model=ScriptedModel(script),
        verbosity_level=-1,
        max_steps=kwargs.pop("max_steps", 6),
        **kwargs,
    )
    return guard(agent, SPEC, log_path=tmp_path / "decisions.jsonl")


def observed(agent: Any) -> str:
    """Everything the agent's model was shown (errors and observations), as one text."""
    seen = [str(getattr(s, "error", "") or "") for s in agent.memory.steps]
    seen += [str(getattr(s, "observations", "") or "") for s in agent.memory.steps]
    return "\n".join(seen)


def assert_invariants(session: GuardSession, where: Path) -> None:
    """The trace is what ran (each tool call in it with the very arguments its body was
    handed, in order), and the report equals ``verify_trace`` of the exported trace
    loaded back from disk and of the decision log read back."""
    report = session.report
    assert report is not None
    traced = [(c.name, dict(c.args)) for c in report.trace if c.name != "final_answer"]
    bodies = [(name, _as_called(name, args)) for name, args in RAN]
    assert traced == bodies, (traced, bodies)
    exported = where / "report.json"
    exported.write_text(json.dumps(report.to_dict()))
    online = report.compliance.to_dict()
    assert report.log_path is not None
    for path in (exported, report.log_path):
        runs = load_traces(path, messages=True)
        assert len(runs) == 1, [(r.trace.metrics if r.trace else r.error) for r in runs]
        (loaded,) = runs
        assert loaded.trace is not None, loaded.error
        assert verify_trace(loaded.trace, SPEC).to_dict() == online, path


def _as_called(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments a tool body noted, as the call's own (without its notes)."""
    if name == "shell":
        return {"cmd": args["cmd"]}
    return dict(args)


def log_lines(session: GuardSession) -> list[dict[str, Any]]:
    assert session.log_path is not None
    return [json.loads(line) for line in session.log_path.read_text().splitlines()]


__all__ = [
    "RAN",
    "SPEC",
    "TOOLS",
    "ExposedToolsError",
    "ToolCallBlocked",
    "Transfer",
    "assert_invariants",
    "code_agent",
    "delete",
    "keep",
    "log_lines",
    "observed",
    "refund",
    "send_email",
    "shell",
    "tool_agent",
    "wipe",
]
