"""agentguard.guard on an OpenAI Agents SDK agent, driven by a scripted ``agents.Model``:
refusals through the SDK's tool guardrails, parallel calls, handoffs, run and run_sync."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents")
from agents import (  # noqa: E402
    Agent,
    OutputGuardrailTripwireTriggered,
    Runner,
    ToolInputGuardrailTripwireTriggered,
    WebSearchTool,
    function_tool,
    handoff,
    set_tracing_disabled,
)
from agents.tool_context import ToolContext  # noqa: E402

import agentguard  # noqa: E402
from agentguard.enforcement.decision import Action  # noqa: E402
from agentguard.guard import AlreadyGuardedError, UnsupportedAgentError  # noqa: E402
from agentguard.scoring import verify_trace  # noqa: E402
from agentguard.testing.openai_agents_models import (  # noqa: E402
    ScriptedAgentsModel,
    call,
    if_observed,
)
from agentguard.trace.loaders import iter_trace_file  # noqa: E402

SPEC = agentguard.parse_spec(
    """
spec refunds
constraint identity_first severity SOFT_BLOCK
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity(result.verified = true))
constraint no_wipe severity HARD_STOP message "Never wipe the ledger." := G !wipe_ledger
"""
)
REFUND = call("issue_refund", order_id="A1", amount=5.0)
VERIFY = call("verify_identity", customer_id="C1")


@pytest.fixture(autouse=True)
def _sdk_defaults() -> Iterator[None]:
    """No trace export to OpenAI; the loop Runner.run_sync reuses (the thread's default,
    which it leaves open) is ours, and closed after the test."""
    set_tracing_disabled(True)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.close()
    asyncio.set_event_loop_policy(None)  # a fresh policy: the next loop is made on demand


class Shop:
    """Real function tools that note every body that ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @function_tool
        def verify_identity(customer_id: str) -> dict[str, Any]:
            """Check the customer's identity."""
            self.ran.append("verify_identity")
            return {"customer_id": customer_id, "verified": True}

        @function_tool
        def issue_refund(order_id: str, amount: float) -> str:
            """Refund an order."""
            self.ran.append("issue_refund")
            return f"refunded {amount} on {order_id}"

        @function_tool
        def wipe_ledger() -> str:
            """Delete every record."""
            self.ran.append("wipe_ledger")
            return "wiped"

        @function_tool
        def flaky() -> str:
            """Always fails."""
            self.ran.append("flaky")
            raise ValueError("the service is down")

        self.tools = [verify_identity, issue_refund, wipe_ledger, flaky]


def agent(shop: Shop, script: list[Any], **kwargs: Any) -> Any:
    return Agent(
        name="support",
        instructions="help",
        tools=shop.tools,
        model=ScriptedAgentsModel(script),
        **kwargs,
    )


def test_a_refused_call_never_runs_and_the_model_reads_why(tmp_path: Path) -> None:
    """The refund before verification is rejected by the guardrail (no body runs, the
    model's next input is the refusal); after verifying, it runs; the report is 1.0."""
    shop = Shop()
    support = agentguard.guard(
        agent(shop, [REFUND, if_observed("blocked", VERIFY, "gave up"), REFUND, "Refunded."]),
        SPEC,
        log_path=tmp_path / "decisions.jsonl",
    )
    result = Runner.run_sync(support, "Refund order A1.")
    assert result.final_output == "Refunded."
    assert shop.ran == ["verify_identity", "issue_refund"]
    model = support.model
    assert "agentguard blocked this call" in model.observations[1]
    assert "To satisfy it: call verify_identity(result.verified = true)" in model.observations[1]
    report = support.agentguard.report
    assert [d.action for d in report.decisions][:1] == [Action.BLOCK]
    assert report.trace.names == ("verify_identity", "issue_refund", "final_answer")
    assert report.compliance.score == 1.0


def test_online_equals_offline_through_the_exported_trace(tmp_path: Path) -> None:
    """The report written to disk and the decision log both load back into a trace whose
    verify_trace equals the firewall's report, tool errors included."""
    shop = Shop()
    log = tmp_path / "decisions.jsonl"
    support = agentguard.guard(
        agent(shop, [call("flaky"), VERIFY, REFUND, "Done."]), SPEC, log_path=log
    )
    Runner.run_sync(support, "Refund A1.")
    report = support.agentguard.report
    assert [c.error for c in report.trace] == [True, False, False, False]
    exported = tmp_path / "report.json"
    exported.write_text(json.dumps(report.to_dict(), default=str))
    for path in (exported, log):
        (loaded,) = list(iter_trace_file(path))
        assert loaded.trace is not None
        assert loaded.trace.names == report.trace.names
        assert verify_trace(loaded.trace, SPEC).to_dict() == report.compliance.to_dict()


def test_parallel_calls_are_judged_in_the_models_order() -> None:
    """[verify, refund] in one turn: both run, verify first. [refund, verify]: the refund
    is judged before the verification it would need, so it is refused."""
    shop = Shop()
    support = agentguard.guard(agent(shop, [[VERIFY, REFUND], "ok"]), SPEC)
    Runner.run_sync(support, "go")
    assert support.agentguard.report.trace.names == (
        "verify_identity",
        "issue_refund",
        "final_answer",
    )

    shop = Shop()
    support = agentguard.guard(agent(shop, [[REFUND, VERIFY], "ok"]), SPEC)
    Runner.run_sync(support, "go")
    assert shop.ran == ["verify_identity"]
    actions = [(d.action, d.tool) for d in support.agentguard.report.decisions]
    assert actions[:2] == [(Action.BLOCK, "issue_refund"), (Action.ALLOW, "verify_identity")]


def test_the_guard_follows_a_handoff_into_the_next_agent() -> None:
    """The triage agent verifies and hands off; billing's refund counts the verification
    (one run, one trace); the handoff itself is not a tool call."""
    shop = Shop()
    billing = Agent(
        name="billing",
        instructions="b",
        tools=shop.tools,
        model=ScriptedAgentsModel([REFUND, "Refunded."]),
    )
    triage = Agent(
        name="triage",
        instructions="t",
        tools=shop.tools,
        handoffs=[billing],
        model=ScriptedAgentsModel([VERIFY, call("transfer_to_billing")]),
    )
    agentguard.guard(triage, SPEC)
    result = Runner.run_sync(triage, "refund")
    assert result.final_output == "Refunded." and result.last_agent is billing
    assert billing.agentguard is triage.agentguard
    assert triage.agentguard.report.trace.names == (
        "verify_identity",
        "issue_refund",
        "final_answer",
    )


def test_a_handoff_object_is_guarded_when_it_is_invoked() -> None:
    """A Handoff built with handoff(...) gets its target guarded at handoff time."""
    shop = Shop()
    billing = Agent(
        name="billing",
        instructions="b",
        tools=shop.tools,
        model=ScriptedAgentsModel([REFUND, "no refund"]),
    )
    triage = Agent(
        name="triage",
        instructions="t",
        handoffs=[handoff(billing)],
        model=ScriptedAgentsModel([call("transfer_to_billing")]),
    )
    agentguard.guard(triage, SPEC)
    Runner.run_sync(triage, "refund")
    assert shop.ran == []  # the refund without verification was refused in billing
    assert billing.agentguard is triage.agentguard


def test_hard_stop_ends_the_run_with_the_sdks_tripwire() -> None:
    """wipe_ledger never runs, nor its sibling; Runner.run raises the SDK's
    ToolInputGuardrailTripwireTriggered carrying the decision; the run is finished."""
    shop = Shop()
    support = agentguard.guard(agent(shop, [[call("wipe_ledger"), VERIFY], "unreachable"]), SPEC)
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        Runner.run_sync(support, "clean up")
    assert caught.value.output.output_info.action is Action.STOP
    assert shop.ran == []
    report = support.agentguard.report
    assert report.stopped and report.trace.names == ()


def test_runner_run_async_and_a_refused_final_answer() -> None:
    """Under Runner.run, a final answer that leaves an obligation open is refused: the SDK
    ends the run with OutputGuardrailTripwireTriggered and the run is finished."""
    spec = agentguard.parse_spec("constraint must_refund := F issue_refund")
    shop = Shop()
    support = agentguard.guard(agent(shop, [VERIFY, "All done."]), spec)
    with pytest.raises(OutputGuardrailTripwireTriggered) as caught:
        asyncio.run(Runner.run(support, "help"))
    decision = caught.value.guardrail_result.output.output_info
    assert decision.tool == "final_answer" and not decision.executes
    assert support.agentguard.report.trace.names == ("verify_identity",)
    assert support.agentguard.running == ()


def test_each_run_gets_its_own_firewall() -> None:
    """Two runs of one agent are two traces: the first run's verification does not
    license the second run's refund."""
    shop = Shop()
    support = agentguard.guard(agent(shop, [VERIFY, "verified", REFUND, "tried"]), SPEC)
    Runner.run_sync(support, "verify")
    Runner.run_sync(support, "refund")
    first, second = support.agentguard.reports
    assert first.trace.names == ("verify_identity", "final_answer")
    assert second.decisions[0].action is Action.BLOCK and "issue_refund" not in second.trace.names


def test_function_tool_schemas_become_declarations() -> None:
    """An argument of the wrong type is refused by the schema check before the body."""
    shop = Shop()
    bad = call("issue_refund", order_id="A1", amount="lots")
    support = agentguard.guard(agent(shop, [VERIFY, bad, "ok"]), SPEC)
    Runner.run_sync(support, "go")
    refused = support.agentguard.report.decisions[1]
    assert refused.action is Action.BLOCK
    assert refused.violations[0].constraint == "tool:issue_refund:schema"
    assert shop.ran == ["verify_identity"]


def test_agents_the_guard_cannot_gate_are_refused() -> None:
    """Hosted tools run elsewhere; guarding twice would check every call twice."""
    with pytest.raises(UnsupportedAgentError, match="WebSearchTool"):
        agentguard.guard(Agent(name="web", tools=[WebSearchTool()]), SPEC)
    guarded = agentguard.guard(Agent(name="a"), SPEC)
    with pytest.raises(AlreadyGuardedError):
        agentguard.guard(guarded, SPEC)


def test_the_agents_own_hooks_still_run() -> None:
    """Hooks set on the agent before guarding receive every event."""
    from agents import AgentHooks

    seen: list[str] = []

    class Hooks(AgentHooks[Any]):
        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            seen.append(tool.name)

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            seen.append("llm")

    shop = Shop()
    support = agentguard.guard(agent(shop, [VERIFY, "ok"], hooks=Hooks()), SPEC)
    Runner.run_sync(support, "go")
    assert seen == ["llm", "verify_identity", "llm"]


class ByTask(ScriptedAgentsModel):
    """Follows the script named by the run's task, pausing between turns so that two
    concurrent runs interleave."""

    def __init__(self, scripts: dict[str, list[Any]]) -> None:
        super().__init__([])
        self.scripts = {task: list(steps) for task, steps in scripts.items()}

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        items = kwargs["input"]
        task = items if isinstance(items, str) else str(items[0]["content"])
        await asyncio.sleep(0.01)
        self.player.script = [self.scripts[task].pop(0)]
        self.player.position = 0
        return await super().get_response(*args, **kwargs)


def test_concurrent_runs_of_one_agent_keep_their_own_traces() -> None:
    """Run A verifies, run B refunds, at the same time on the same agent: B's refund is
    judged on B's trace alone and refused; A's is untouched."""
    shop = Shop()
    model = ByTask({"A": [VERIFY, REFUND, "a"], "B": [REFUND, "b"]})
    support = agentguard.guard(
        Agent(name="support", instructions="i", tools=shop.tools, model=model), SPEC
    )

    async def both() -> None:
        await asyncio.gather(Runner.run(support, "A"), Runner.run(support, "B"))

    asyncio.run(both())
    traces = sorted(r.trace.names for r in support.agentguard.reports)
    assert traces == [("final_answer",), ("verify_identity", "issue_refund", "final_answer")]


def test_a_finished_run_stays_finished_for_late_events() -> None:
    """After a run ended (here by a HARD_STOP), a late guardrail call of that run is
    refused by the finished run: no second run starts, no second report appears."""
    from types import SimpleNamespace

    from agents import AgentHooks

    usages: list[Any] = []

    class Keep(AgentHooks[Any]):
        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            usages.append(context.usage)

    shop = Shop()
    support = agentguard.guard(
        agent(shop, [call("wipe_ledger"), "unreachable"], hooks=Keep()), SPEC
    )
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(support, "clean up")
    guard = support.agentguard
    late_call = SimpleNamespace(
        usage=usages[0],
        tool_name="verify_identity",
        tool_arguments='{"customer_id": "C1"}',
        tool_call_id="late-1",
    )
    late = asyncio.run(guard.input_guardrail.run(SimpleNamespace(context=late_call, agent=support)))
    assert late.behavior["type"] == "raise_exception"
    assert late.output_info.action is Action.STOP
    assert len(guard.reports) == 1 and guard.running == ()
    assert shop.ran == []


def test_a_clone_of_a_guarded_agent_is_guarded_once() -> None:
    """agent.clone() shares the guarded tools, hooks and output guardrail: one final
    answer proposal, one report (a second guardrail refused the answer of an ended run)."""
    shop = Shop()
    support = agentguard.guard(agent(shop, [VERIFY, "done"]), SPEC)
    clone = support.clone(name="clone")
    assert Runner.run_sync(clone, "verify").final_output == "done"
    assert clone.output_guardrails.count(support.agentguard.output_guardrail) == 1
    (report,) = support.agentguard.reports
    assert report.trace.names == ("verify_identity", "final_answer")


def test_runs_ended_by_the_sdk_without_a_model_answer_are_finished() -> None:
    """tool_use_behavior="stop_on_first_tool" (the tool's output is the answer) and a
    max_turns error handler's answer both go through the output guardrail: each run is
    finished with its answer in the trace."""
    shop = Shop()
    first = agentguard.guard(agent(shop, [VERIFY], tool_use_behavior="stop_on_first_tool"), SPEC)
    Runner.run_sync(first, "verify")
    assert first.agentguard.report.trace.names == ("verify_identity", "final_answer")
    assert first.agentguard.running == ()

    second = agentguard.guard(agent(Shop(), [VERIFY, VERIFY, VERIFY]), SPEC)
    result = Runner.run_sync(
        second, "verify", max_turns=2, error_handlers={"max_turns": lambda data: "gave up"}
    )
    assert result.final_output == "gave up" and second.agentguard.running == ()
    assert second.agentguard.report.trace.names[-1] == "final_answer"


def test_a_function_reading_its_context_reads_the_checked_arguments() -> None:
    """A function that reads ``ctx.tool_arguments`` (the JSON text) reads the checked
    snapshot, defaults filled in, not the model's text."""
    seen: list[str] = []

    @function_tool
    def wipe(ctx: ToolContext[Any], path: str, force: bool = False) -> str:
        """Delete a folder."""
        seen.append(ctx.tool_arguments)
        return "wiped"

    support = agentguard.guard(
        Agent(name="s", tools=[wipe], model=ScriptedAgentsModel([call("wipe", path="/t"), "ok"])),
        SPEC,
    )
    Runner.run_sync(support, "wipe")
    assert [json.loads(text) for text in seen] == [{"path": "/t", "force": False}]


def test_a_tool_whose_invoker_was_reset_is_guarded_once_again() -> None:
    """User code putting a guarded tool's original invoker back: the next turn guards the
    tool again, with one agentguard guardrail (two judged each call twice, and the
    second refused the call as already run)."""
    shop = Shop()
    support = agentguard.guard(agent(shop, [VERIFY, VERIFY, "ok"]), SPEC)
    tool = support.tools[0]
    tool.on_invoke_tool = tool.on_invoke_tool.agentguard_inner
    Runner.run_sync(support, "verify twice")
    assert shop.ran == ["verify_identity", "verify_identity"]
    assert tool.tool_input_guardrails.count(support.agentguard.input_guardrail) == 1
