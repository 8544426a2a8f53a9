"""Run agents on instances under the three settings of Section 4.2 and aggregate.

- ``baseline``: every call runs; the trace is scored offline.
- ``block-and-warn``: every constraint is BLOCK_AND_WARN in the firewall; a blocked
  call goes back to the agent as a warning, an identical retry is let through.
- ``soft-block``: every constraint is SOFT_BLOCK(3); the third violation of the same
  constraint ends the run.

The run budget is the paper's ``10d + 10`` tool calls. Enforcement events are counted
per layer with their resolution (Table 17): *insisted* when the agent's next proposal
is the identical call, *listened* otherwise, unresolved when the run ended first.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentguard.bench.agent import (
    Action as AgentAction,
)
from agentguard.bench.agent import (
    AgentFactory,
    Feedback,
    FinalAnswer,
    ToolCall,
    scripted_factory,
)
from agentguard.bench.errors import BadParameterError, BenchError
from agentguard.bench.generate import instance_spec_text
from agentguard.bench.instance import Instance
from agentguard.bench.reward import parse_answer
from agentguard.bench.synthesis import LAYER_WEIGHTS
from agentguard.bench.tools import Toolbox
from agentguard.enforcement.decision import Action, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.language import parse_spec
from agentguard.scoring import verify_trace
from agentguard.trace.final_tool import FINAL_TOOL, count_tool_calls
from agentguard.trace.model import Call, Trace

Setting = Literal["baseline", "block-and-warn", "soft-block"]
SETTINGS: tuple[Setting, ...] = ("baseline", "block-and-warn", "soft-block")
SEVERITY: Mapping[str, str | None] = {
    "baseline": None,
    "block-and-warn": "BLOCK_AND_WARN",
    "soft-block": "SOFT_BLOCK(3)",
}
LAYERS: tuple[str, ...] = tuple(LAYER_WEIGHTS)


def call_budget(difficulty: int) -> int:
    """Section 4.2: a budget of ``10d + 10`` tool calls at difficulty ``d``."""
    return 10 * difficulty + 10


@dataclass(frozen=True, slots=True)
class EnforcementEvent:
    """One blocked or stopping decision, attributed to the layers it violated."""

    step: int
    tool: str
    layers: tuple[str, ...]
    constraints: tuple[str, ...]
    action: str
    resolution: Literal["insisted", "listened", "unresolved"] = "unresolved"


@dataclass(frozen=True, slots=True)
class RunResult:
    """One (instance, setting) run."""

    instance_id: str
    template: str
    difficulty: int
    seed: int
    setting: str
    answer: Any
    correct: bool
    compliance: float
    layers: Mapping[str, tuple[int, int]]
    events: tuple[EnforcementEvent, ...] = ()
    stopped: bool = False
    num_tool_calls: int = 0
    mistakes: tuple[str, ...] = ()
    trace: Trace = field(default_factory=Trace, compare=False, repr=False)
    """The executed calls, with their results: what the GRPO reward's ``R_dist`` and a
    check of what the firewall let through both need (not in :meth:`to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance_id,
            "template": self.template,
            "difficulty": self.difficulty,
            "seed": self.seed,
            "setting": self.setting,
            "answer": self.answer,
            "correct": self.correct,
            "compliance": self.compliance,
            "layers": {k: list(v) for k, v in self.layers.items()},
            "events": [
                {
                    "step": e.step,
                    "tool": e.tool,
                    "layers": list(e.layers),
                    "constraints": list(e.constraints),
                    "action": e.action,
                    "resolution": e.resolution,
                }
                for e in self.events
            ],
            "stopped": self.stopped,
            "num_tool_calls": self.num_tool_calls,
            "mistakes": list(self.mistakes),
        }


def _execute(toolbox: Toolbox, call: ToolCall) -> tuple[Feedback, Any]:
    try:
        result = toolbox.call(call.name, call.args)
    except BadParameterError as exc:
        return Feedback("error", {"error": str(exc)}, str(exc)), {"error": str(exc)}
    return Feedback("result", result), result


def _score(trace: Trace, spec_text: str) -> tuple[float, dict[str, tuple[int, int]]]:
    report = verify_trace(trace, parse_spec(spec_text))
    by_layer = report.by_layer() if callable(report.by_layer) else report.by_layer
    return float(report.score), {str(k): (int(v[0]), int(v[1])) for k, v in by_layer.items()}


def _result(
    instance: Instance,
    setting: str,
    answer: Any,
    trace: Trace,
    spec_text: str,
    agent: object,
    **extra: Any,
) -> RunResult:
    score, layers = _score(trace, spec_text)
    return RunResult(
        instance_id=instance.id,
        template=instance.template,
        difficulty=instance.difficulty,
        seed=instance.seed,
        setting=setting,
        answer=answer,
        correct=parse_answer(answer) == instance.expected_answer,
        compliance=score,
        layers=layers,
        num_tool_calls=count_tool_calls(trace),
        mistakes=tuple(getattr(agent, "mistakes", ())),
        trace=trace,
        **extra,
    )


def run_baseline(instance: Instance, factory: AgentFactory) -> RunResult:
    """Run to completion with no enforcement; score offline."""
    agent = factory(instance)
    toolbox = Toolbox(instance.seed, instance.difficulty, instance.tools, aliases=instance.aliases)
    calls: list[Call] = []
    feedback: Feedback | None = None
    answer: Any = None
    budget = call_budget(instance.difficulty)
    while True:
        action: AgentAction = agent.act(feedback)
        if isinstance(action, FinalAnswer):
            answer = action.value
            break
        if len(calls) >= budget:
            break
        feedback, result = _execute(toolbox, action)
        calls.append(Call(action.name, dict(action.args), result))
    return _result(instance, "baseline", answer, Trace(tuple(calls)), instance.spec_text, agent)


def _firewall_class() -> Any:
    try:
        module = importlib.import_module("agentguard.enforcement.firewall")
    except ImportError as exc:  # the firewall lands separately
        raise MissingExtraError("firewall", f"agentguard.enforcement.firewall ({exc})") from None
    return module.Firewall


def run_enforced(instance: Instance, factory: AgentFactory, setting: Setting) -> RunResult:
    """Run through the firewall with every constraint at the setting's severity."""
    firewall_cls = _firewall_class()
    spec_text = instance_spec_text(instance, severity=SEVERITY[setting])
    spec = parse_spec(spec_text, source=f"<{instance.id}>")
    # the run is scored on its executed trace: keep it
    fw = firewall_cls(spec, run_id=f"{instance.id}/{setting}", soft_block_limit=3, keep_trace=True)
    agent = factory(instance)
    toolbox = Toolbox(instance.seed, instance.difficulty, instance.tools, aliases=instance.aliases)
    budget = call_budget(instance.difficulty)
    events: list[EnforcementEvent] = []
    pending: int | None = None  # index of the event awaiting its resolution
    last_blocked: tuple[str, str] | None = None
    feedback: Feedback | None = None
    answer: Any = None
    executed = 0
    stopped = False
    for _ in range(4 * budget + 8):  # proposals, including blocked ones
        action = agent.act(feedback)
        name, args = (
            (action.name, dict(action.args))
            if isinstance(action, ToolCall)
            else (FINAL_TOOL, {"answer": action.value})
        )
        if pending is not None:
            same = (name, repr(sorted(args.items()))) == last_blocked
            events[pending] = _resolve(events[pending], "insisted" if same else "listened")
            pending = None
        if isinstance(action, ToolCall) and executed >= budget:
            break
        try:
            decision = fw.propose(name, args)
        except RunStopped as stop:
            decision = stop.decision
        if decision.violations and not decision.executes:
            events.append(_event(decision, executed))
        if decision.executes:
            if isinstance(action, FinalAnswer):
                fw.record(name, args, action.value)
                answer = action.value
                break
            feedback, result = _execute(toolbox, action)
            fw.record(name, args, result)
            executed += 1
        elif decision.action is Action.STOP or getattr(fw, "stopped", False):
            stopped = True
            break
        else:
            pending = len(events) - 1 if decision.violations else None
            last_blocked = (name, repr(sorted(args.items())))
            feedback = Feedback("blocked", message=decision.message)
    report = fw.finish()
    trace = Trace(tuple(c for c in report.trace if c.name != FINAL_TOOL))
    return _result(
        instance,
        setting,
        answer,
        trace,
        spec_text,
        agent,
        events=tuple(events),
        stopped=stopped or bool(report.stopped),
    )


def _event(decision: Any, step: int) -> EnforcementEvent:
    layers = tuple(sorted({v.layer or "?" for v in decision.violations}))
    return EnforcementEvent(
        step=step,
        tool=decision.tool,
        layers=layers,
        constraints=tuple(v.constraint for v in decision.violations),
        action=str(decision.action.value),
    )


def _resolve(
    event: EnforcementEvent, resolution: Literal["insisted", "listened"]
) -> EnforcementEvent:
    return EnforcementEvent(
        event.step, event.tool, event.layers, event.constraints, event.action, resolution
    )


def run_instance(
    instance: Instance, setting: Setting, factory: AgentFactory | None = None
) -> RunResult:
    """One run of ``instance`` under ``setting`` (the scripted agent by default)."""
    if setting not in SETTINGS:
        raise BenchError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
    factory = factory or scripted_factory()
    if setting == "baseline":
        return run_baseline(instance, factory)
    return run_enforced(instance, factory, setting)


# -- aggregation ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LayerEvents:
    """Table 17's row for one layer."""

    events: int = 0
    resolved: int = 0
    insisted: int = 0
    listened: int = 0

    @property
    def insist_rate(self) -> float | None:
        """Insisted ÷ events, Table 17's definition (2492 / 61111 = 4.08% on L2)."""
        return self.insisted / self.events if self.events else None

    @property
    def insist_rate_resolved(self) -> float | None:
        """Insisted ÷ resolved: the rate among events the agent answered."""
        return self.insisted / self.resolved if self.resolved else None


@dataclass(frozen=True, slots=True)
class BenchSummary:
    """Accuracy, mean compliance, per-layer pass rates (Table 4), events (Table 17)."""

    setting: str
    runs: int
    accuracy: float
    compliance: float
    layer_pass_rates: Mapping[str, float | None]
    layer_events: Mapping[str, LayerEvents]
    mean_tool_calls: float
    stopped: int
    results: tuple[RunResult, ...] = field(default=())

    def to_dict(self, *, with_runs: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "setting": self.setting,
            "runs": self.runs,
            "accuracy": self.accuracy,
            "compliance": self.compliance,
            "layer_pass_rates": dict(self.layer_pass_rates),
            "enforcement": {
                layer: {
                    "events": e.events,
                    "resolved": e.resolved,
                    "insisted": e.insisted,
                    "listened": e.listened,
                    "insist_rate": e.insist_rate,
                    "insist_rate_resolved": e.insist_rate_resolved,
                }
                for layer, e in self.layer_events.items()
            },
            "mean_tool_calls": self.mean_tool_calls,
            "stopped": self.stopped,
        }
        if with_runs:
            out["results"] = [r.to_dict() for r in self.results]
        return out


def summarize(setting: str, results: Sequence[RunResult]) -> BenchSummary:
    n = len(results)
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in results:
        for layer, (p, t) in r.layers.items():
            passed[layer] += p
            total[layer] += t
    events: dict[str, LayerEvents] = {}
    for layer in LAYERS:
        evs = [e for r in results for e in r.events if layer in e.layers]
        ins = sum(e.resolution == "insisted" for e in evs)
        lis = sum(e.resolution == "listened" for e in evs)
        events[layer] = LayerEvents(len(evs), ins + lis, ins, lis)
    return BenchSummary(
        setting=setting,
        runs=n,
        accuracy=sum(r.correct for r in results) / n if n else 0.0,
        compliance=sum(r.compliance for r in results) / n if n else 0.0,
        layer_pass_rates={
            layer: (passed[layer] / total[layer] if total[layer] else None) for layer in LAYERS
        },
        layer_events=events,
        mean_tool_calls=sum(r.num_tool_calls for r in results) / n if n else 0.0,
        stopped=sum(r.stopped for r in results),
        results=tuple(results),
    )


def run_benchmark(
    instances: Iterable[Instance],
    setting: Setting,
    factory: AgentFactory | None = None,
    *,
    on_result: Callable[[RunResult], None] | None = None,
) -> BenchSummary:
    """Run every instance under one setting and summarize."""
    results = []
    for inst in instances:
        result = run_instance(inst, setting, factory)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return summarize(setting, results)
