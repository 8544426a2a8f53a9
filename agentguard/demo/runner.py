"""Run the demo scenario with and without the guard, and write what each run left.

Files written to ``out_dir``: ``guarded-decisions.jsonl`` (the firewall's log),
``guarded-trace.json`` and ``unguarded-trace.json`` (metrics records, the format
``agentguard check`` reads), and one compliance report per run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agentguard.demo.scenario import TASK, script
from agentguard.demo.shop import ResultListener, Shop, smolagents_tools
from agentguard.enforcement.decision import Decision, RunStopped
from agentguard.guard import DecisionListener

SPEC_RESOURCE = "refund.ltl"


@contextmanager
def spec_path() -> Iterator[Path]:
    """The demo spec shipped inside the package, as a real file path."""
    with resources.as_file(resources.files("agentguard.demo") / SPEC_RESOURCE) as path:
        yield path


@dataclass
class DemoRun:
    """What one run of the scenario left behind."""

    guarded: bool
    answer: str | None
    calls_run: list[dict[str, Any]]
    refunded: list[str]
    compliance: dict[str, Any]
    attempts: list[Decision] = field(default_factory=list)
    stopped: Decision | None = None
    files: dict[str, Path] = field(default_factory=dict)


def run_guarded(
    out_dir: Path,
    *,
    on_decision: DecisionListener | None = None,
    on_result: ResultListener | None = None,
) -> DemoRun:
    """The scenario behind ``agentguard.guard``: every call proposed before it runs."""
    from smolagents import ToolCallingAgent

    from agentguard.guard import guard
    from agentguard.testing.smolagents_models import ScriptedModel

    shop = Shop(on_result=on_result)
    log = out_dir / "guarded-decisions.jsonl"
    agent = ToolCallingAgent(
        tools=smolagents_tools(shop), model=ScriptedModel(script()), verbosity_level=-1
    )
    with spec_path() as spec:
        guard(agent, str(spec), log_path=log, run_id="demo-guarded", on_decision=on_decision)
        answer, stopped = _run(agent.run)
    session = agent.agentguard
    report = session.report
    compliance = _to_dict(report.compliance) if report is not None else {}
    trace = [c.to_record() for c in session.trace]
    files = {
        "decision log": session.log_path or log,
        "trace": _write(out_dir / "guarded-trace.json", {"tool_calls": trace}),
        "report": _write(
            out_dir / "guarded-report.json", _to_dict(report) if report is not None else {}
        ),
    }
    return DemoRun(
        True,
        answer,
        shop.ledger,
        shop.refunded,
        compliance,
        list(session.attempts),
        stopped or session.stop,
        files,
    )


def run_unguarded(out_dir: Path, *, on_result: ResultListener | None = None) -> DemoRun:
    """The same scripted model with no guard; its trace is verified afterwards."""
    from smolagents import ToolCallingAgent

    from agentguard.language import load_spec
    from agentguard.scoring import verify_trace
    from agentguard.testing.smolagents_models import ScriptedModel
    from agentguard.trace.model import Trace

    shop = Shop(on_result=on_result)
    agent = ToolCallingAgent(
        tools=smolagents_tools(shop), model=ScriptedModel(script()), verbosity_level=-1
    )
    answer, _ = _run(agent.run)
    if answer is not None:
        shop.answer(answer)
    with spec_path() as spec:
        compliance = _to_dict(verify_trace(Trace.from_records(shop.ledger), load_spec(spec)))
    files = {
        "trace": _write(out_dir / "unguarded-trace.json", {"tool_calls": shop.ledger}),
        "report": _write(out_dir / "unguarded-report.json", compliance),
    }
    return DemoRun(False, answer, shop.ledger, shop.refunded, compliance, files=files)


def _run(run: Callable[[str], Any]) -> tuple[str | None, Decision | None]:
    try:
        return str(run(TASK)), None
    except RunStopped as stop:
        decision = stop.decision if isinstance(stop.decision, Decision) else None
        return None, decision


def _to_dict(obj: Any) -> dict[str, Any]:
    to_dict = getattr(obj, "to_dict", None)
    data = to_dict() if callable(to_dict) else obj
    return dict(data) if isinstance(data, dict) else {"value": data}


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path


__all__ = ["DemoRun", "run_guarded", "run_unguarded", "spec_path"]
