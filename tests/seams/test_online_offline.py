"""Online = offline: the firewall's report equals ``verify_trace`` of the run's exported
trace loaded back from disk, and of its decision log, in the bare Firewall and in both
adapters, on random scripted runs with results as JSON text, dicts and plain strings."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

from agentguard.enforcement.decision import RunStopped
from agentguard.enforcement.firewall import Firewall, FirewallReport
from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.monitor import Verdict
from agentguard.scoring.verify import verify_trace
from agentguard.testing.script import ScriptedCall, call
from agentguard.trace.loaders import load_traces

SPEC: Spec = parse_spec(
    """
spec online_offline
constraint looked severity SOFT_BLOCK(2) := G(refund -> O lookup(result.status = "ok"))
constraint departed severity HARD_STOP := G !lookup(result.status = "departed")
constraint cap severity BLOCK_AND_WARN := G !refund(amount > 50)
constraint notes severity TOLERATE := CalledN(note, 2, <=)
constraint verified := G(refund -> O verify)
constraint cheap_late := G(lookup(result.amount > 30) -> !F refund)
constraint answered := F final_answer
"""
)

DIALOGUE_SPEC: Spec = parse_spec(
    """
spec online_offline_dialogue
constraint confirmed severity SOFT_BLOCK(2) := G(refund -> O user_message(text ~ /\\byes\\b/i))
constraint answered_user := G(user_message -> F assistant_message)
constraint quiet severity HARD_STOP := G !assistant_message(text ~ /secret/)
constraint one_at_a_time := G !assistant_message(tool_calls > 2)
constraint next_is_tool := G(verify -> N !refund)
constraint looked := G(refund -> O lookup(result.status = "ok"))
"""
)
"""Names dialogue events, so the firewall judges the messages it observes."""

STATUS = {"A": "ok", "B": "departed", "C": "late", "D": "ok"}
ENCODINGS = ("json", "dict", "text")


def result_of(name: str, args: dict[str, Any], encoding: str) -> Any:
    """What the tool returns, in the run's encoding."""
    if name == "lookup":
        order = str(args.get("order_id"))
        value: dict[str, Any] = {"status": STATUS.get(order, "ok"), "amount": 20 * len(order)}
        if order == "D":
            value["amount"] = 40
    else:
        value = {"status": "ok", "tool": name}
    if encoding == "json":
        return json.dumps(value)
    if encoding == "dict":
        return value
    return f"{name} done: {value['status']}"


def random_turns(rng: random.Random) -> list[list[ScriptedCall]]:
    choices = [
        lambda: call("lookup", order_id=rng.choice("ABCD")),
        lambda: call("verify"),
        lambda: call("refund", order_id=rng.choice("AD"), amount=rng.choice([10, 90])),
        lambda: call("note"),
    ]
    return [
        [rng.choice(choices)() for _ in range(rng.choice([1, 1, 2, 3]))]
        for _ in range(rng.randint(1, 5))
    ]


def assert_online_equals_offline(report: FirewallReport, spec: Spec, where: Path) -> None:
    """The exported trace and the decision log, read back, score exactly as the run did."""
    exported = where / "report.json"
    exported.write_text(json.dumps(report.to_dict()))
    online = report.compliance.to_dict()
    for path in (exported, report.log_path):
        assert path is not None
        runs = load_traces(path, messages=True)
        assert len(runs) == 1, [(r.trace.metrics if r.trace else r.error) for r in runs]
        (loaded,) = runs
        assert loaded.trace is not None, loaded.error
        offline = verify_trace(loaded.trace, spec)
        assert offline.to_dict() == online, path
        passed = {c.name: c.passed for c in offline.constraints}
        for name, verdict in report.verdicts.items():
            assert (verdict is Verdict.SATISFIED) == passed[name], (name, path)


def test_bare_firewall(tmp_path: Path) -> None:
    """600 random runs through propose_batch / start / complete."""
    rng = random.Random(9)
    for run in range(600):
        encoding = ENCODINGS[run % 3]
        log = tmp_path / f"fw{run % 2}.jsonl"
        log.unlink(missing_ok=True)
        fw = Firewall(SPEC, log_path=log, keep_trace=True)
        for turn in [*random_turns(rng), [call("final_answer", answer="done")]]:
            decisions = fw.propose_batch([(c.name, c.args) for c in turn])
            for decision in decisions:
                if not decision.executes:
                    continue
                started = fw.start(decision, timeout=0)
                if started.executes:
                    fw.complete(started, result_of(started.tool, dict(started.args), encoding))
            if fw.stopped:
                break
        assert_online_equals_offline(fw.finish(), SPEC, tmp_path)


def test_bare_firewall_with_dialogue_events(tmp_path: Path) -> None:
    """300 random runs with user and assistant messages observed between the turns, under a
    spec that judges them and one that does not."""
    rng = random.Random(12)
    for run in range(300):
        spec = DIALOGUE_SPEC if run % 2 == 0 else SPEC
        encoding = ENCODINGS[run % 3]
        log = tmp_path / f"dlg{run % 2}.jsonl"
        log.unlink(missing_ok=True)
        fw = Firewall(spec, log_path=log, keep_trace=True)
        for turn in [*random_turns(rng), [call("final_answer", answer="done")]]:
            if rng.random() < 0.6:
                fw.observe("user", rng.choice(["yes please", "no", "Yes.", "maybe"]))
            text = rng.choice(["", "on it", "a secret"])
            fw.observe("assistant", text, tool_calls=len(turn))
            if fw.stopped:
                break
            decisions = fw.propose_batch([(c.name, c.args) for c in turn])
            for decision in decisions:
                if not decision.executes:
                    continue
                started = fw.start(decision, timeout=0)
                if started.executes:
                    fw.complete(started, result_of(started.tool, dict(started.args), encoding))
            if fw.stopped:
                break
        report = fw.finish()
        assert report.trace.metrics["num_tool_calls"] == sum(
            1 for c in report.trace if c.is_tool and c.name != "final_answer"
        )
        assert_online_equals_offline(report, spec, tmp_path)


def smolagents_tools(encoding: str) -> list[Any]:
    from smolagents import Tool

    def make(tool_name: str, params: dict[str, str]) -> Any:
        class Scripted(Tool):  # type: ignore[misc]  # smolagents ships no type information
            name = tool_name
            description = f"The {tool_name} tool."
            inputs = {p: {"type": t, "description": p} for p, t in params.items()}  # noqa: RUF012 - smolagents reads a class attribute
            output_type = "any"
            skip_forward_signature_validation = True

            def forward(self, **kwargs: Any) -> Any:
                return result_of(tool_name, kwargs, encoding)

        return Scripted()

    return [
        make("lookup", {"order_id": "string"}),
        make("verify", {}),
        make("refund", {"order_id": "string", "amount": "integer"}),
        make("note", {}),
    ]


def test_smolagents_tool_calling_agent(tmp_path: Path) -> None:
    """250 random runs of a real ToolCallingAgent driven by a scripted model."""
    from smolagents import ToolCallingAgent

    from agentguard.guard import guard
    from agentguard.testing.smolagents_models import ScriptedModel

    rng = random.Random(10)
    for run in range(250):
        spec = DIALOGUE_SPEC if run % 5 == 0 else SPEC
        encoding = ENCODINGS[run % 3]
        turns = random_turns(rng)
        finals: list[Any] = [call("final_answer", answer="done")] * 4
        log = tmp_path / f"smol{run % 2}.jsonl"
        log.unlink(missing_ok=True)
        agent = ToolCallingAgent(
            tools=smolagents_tools(encoding),
            model=ScriptedModel([*turns, *finals]),
            verbosity_level=-1,
            max_steps=len(turns) + 4,
        )
        guard(agent, spec, log_path=log)
        with contextlib.suppress(RunStopped):
            agent.run(rng.choice(["go", "yes, refund it"]))
        report = agent.agentguard.report
        assert report is not None
        assert_online_equals_offline(report, spec, tmp_path)


def test_langchain_create_agent(tmp_path: Path) -> None:
    """150 random runs of a real create_agent graph with the middleware."""
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool

    from agentguard.testing.langchain_models import ScriptedChatModel
    from tests.integrations.adapters import AgentGuardMiddleware

    def tools(encoding: str) -> list[Any]:
        def lookup(order_id: str) -> Any:
            """Look an order up."""
            return result_of("lookup", {"order_id": order_id}, encoding)

        def verify() -> Any:
            """Verify the customer."""
            return result_of("verify", {}, encoding)

        def refund(order_id: str, amount: int) -> Any:
            """Refund an order."""
            return result_of("refund", {"order_id": order_id, "amount": amount}, encoding)

        def note() -> Any:
            """Take a note."""
            return result_of("note", {}, encoding)

        return [StructuredTool.from_function(f) for f in (lookup, verify, refund, note)]

    rng = random.Random(11)
    for run in range(150):
        spec = DIALOGUE_SPEC if run % 5 == 0 else SPEC
        encoding = ENCODINGS[run % 3]
        turns: list[Any] = random_turns(rng)
        log = tmp_path / f"lc{run % 2}.jsonl"
        log.unlink(missing_ok=True)
        middleware = AgentGuardMiddleware(spec, log_path=log)
        model = ScriptedChatModel([*turns, "done", "done", "done", "done"])
        agent = create_agent(model, tools(encoding), middleware=[middleware])
        with contextlib.suppress(RunStopped):
            agent.invoke({"messages": [HumanMessage(rng.choice(["go", "yes, refund it"]))]})
        report = middleware.agentguard.report
        assert report is not None
        if spec is DIALOGUE_SPEC:  # the user's turn and the model's messages were judged
            assert report.trace[0].name == "user_message"
        assert_online_equals_offline(report, spec, tmp_path)
