"""OpenAI Agents SDK: every path from the model's output to a tool's effect is gated,
and a call the SDK decides not to run after agentguard allowed it is withdrawn.

Paths tried: a ``handoff(...)`` object's agent, an agent used as a tool, a tool
appended after ``guard()`` or by instructions at run time, a copy of a guarded tool, a
hosted tool added later; the SDK dropping an allowed call: the user's own tool input
guardrail rejecting it, a hook raising before it runs.
"""

from __future__ import annotations

import asyncio
import copy
import time
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial._openai_agents import (
    Shop,
    assert_invariants,
    guarded,
    log_lines,
    run_approving,
    scripted,
    sdk_defaults,
)

agents = pytest.importorskip("agents")
from agents import (  # noqa: E402
    Agent,
    AgentHooks,
    Handoff,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailTripwireTriggered,
    WebSearchTool,
    handoff,
)

import agentguard  # noqa: E402
from agentguard.enforcement.decision import Action  # noqa: E402
from agentguard.guard import UnsupportedAgentError  # noqa: E402
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call  # noqa: E402

__all__ = ["sdk_defaults"]

SPEC = agentguard.parse_spec(
    """
constraint one_refund severity HARD_STOP := CalledN(issue_refund, 1, <=)
constraint identity_first severity SOFT_BLOCK
  := G(issue_refund -> O verify_identity(result.verified = true))
constraint no_forced_wipe severity HARD_STOP message "Never force a wipe."
  := G !wipe(force = true)
"""
)
VERIFY = call("verify_identity", customer_id="C1")
STALL = 30.0
"""start_timeout in the tests of dropped calls: a call left in flight stalls its
siblings and the run's finish this long; the run must take far less."""
REFUND = call("issue_refund", order_id="A1", amount=5.0)
WIPE = call("wipe", path="/prod")


def test_a_handoff_objects_agent_has_its_tools_known(tmp_path: Path) -> None:
    """triage verifies, hands off through handoff(billing); billing's refund is judged
    with the verification and allowed (its tool was refused as unknown)."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    billing = scripted(shop, [REFUND, "Refunded."], name="billing")
    billing.tools = [shop.issue_refund]
    triage = scripted(
        shop, [VERIFY, call("transfer_to_billing")], name="triage", handoffs=[handoff(billing)]
    )
    triage.tools = [shop.verify_identity]
    guarded(triage, SPEC, log)
    result = Runner.run_sync(triage, "refund A1")
    assert result.final_output == "Refunded."
    assert shop.names == ["verify_identity", "issue_refund"]
    report = triage.agentguard.report
    assert [d.action for d in report.decisions] == [Action.ALLOW] * 3
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_a_handoff_built_at_run_time_has_its_tools_known(tmp_path: Path) -> None:
    """A Handoff whose agent is made when it is invoked: the agent is guarded then, and
    its refund (a tool the run's firewall had not seen) is judged, not refused as unknown."""
    shop = Shop()
    log = tmp_path / "d.jsonl"

    async def make_billing(context: Any, raw: str) -> Any:
        return scripted(shop, [REFUND, "Refunded."], name="billing")

    dynamic = Handoff(
        tool_name="transfer_to_billing",
        tool_description="billing",
        input_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
        on_invoke_handoff=make_billing,
        agent_name="billing",
    )
    triage = Agent(
        name="triage",
        tools=[shop.verify_identity],
        handoffs=[dynamic],
        model=ScriptedAgentsModel([VERIFY, call("transfer_to_billing")]),
    )
    guarded(triage, SPEC, log)
    result = Runner.run_sync(triage, "refund A1")
    assert result.final_output == "Refunded."
    assert shop.names == ["verify_identity", "issue_refund"]
    assert_invariants(shop, triage.agentguard.report, SPEC, log, tmp_path)


def test_an_agent_used_as_a_tool_is_guarded(tmp_path: Path) -> None:
    """A helper agent used as a tool forces a wipe: stopped before its body runs (the
    helper's tools ran unguarded); the helper's answer does not end the outer run."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    helper = scripted(shop, [WIPE, "wiped"], name="helper")
    helper.tools = [shop.wipe]
    support = scripted(shop, [call("helper", input="clean up"), VERIFY, "done"])
    support.tools = [shop.verify_identity, helper.as_tool("helper", "Cleans up.")]
    guarded(support, SPEC, log)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(support, "clean up")
    assert shop.ran == []
    report = support.agentguard.report
    assert report.stopped and support.agentguard.running == ()
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_a_nested_agents_calls_count_in_the_outer_run(tmp_path: Path) -> None:
    """The helper agent refunds inside the outer run; the outer run's own refund is the
    second of the run and is stopped (the helper's refund was not counted)."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    helper = scripted(shop, [REFUND, "refunded"], name="helper")
    helper.tools = [shop.issue_refund]
    support = scripted(shop, [VERIFY, call("helper", input="refund A1"), REFUND, "done"])
    support.tools = [shop.verify_identity, shop.issue_refund, helper.as_tool("helper", "h")]
    guarded(support, SPEC, log)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(support, "refund twice")
    assert shop.names == ["verify_identity", "issue_refund"]
    report = support.agentguard.report
    assert report.trace.names == ("verify_identity", "issue_refund", "helper")
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_a_tool_appended_after_guard_is_gated(tmp_path: Path) -> None:
    """agent.tools.append(wipe) after guard(): the forced wipe is stopped, not run."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    support = scripted(shop, [WIPE, "done"])
    support.tools = [shop.verify_identity]
    guarded(support, SPEC, log)
    support.tools.append(shop.wipe)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(support, "clean up")
    assert shop.ran == []
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_tool_added_by_instructions_at_run_time_is_gated_and_known(tmp_path: Path) -> None:
    """Instructions that add the wipe tool once the first turn is done: the unforced wipe
    runs (known, not refused as unknown), the forced one is stopped."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    script = [VERIFY, VERIFY, call("wipe", path="/tmp", force=False), WIPE, "done"]
    support = scripted(shop, script)
    support.tools = [shop.verify_identity]

    def instructions(context: Any, agent: Any) -> str:
        if support.model.observations and all(t.name != "wipe" for t in agent.tools):
            agent.tools.append(shop.wipe)
        return "help"

    support.instructions = instructions
    guarded(support, SPEC, log)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(support, "clean up")
    assert shop.names == ["verify_identity", "verify_identity", "wipe"]
    assert shop.ran[-1] == ("wipe", {"path": "/tmp", "force": False})
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_copy_of_a_guarded_tool_stays_guarded(tmp_path: Path) -> None:
    """copy.copy of a guarded tool (the SDK's own copy rebinds the invoker) put on the
    agent: its forced wipe is stopped (the copy's invoker ran unguarded)."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    support = scripted(shop, [WIPE, "done"])
    support.tools = [shop.wipe]
    guarded(support, SPEC, log)
    support.tools = [copy.copy(support.tools[0])]
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(support, "clean up")
    assert shop.ran == []
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_hosted_tool_added_after_guard_is_refused_before_the_model_runs() -> None:
    """A WebSearchTool appended later runs on the provider's servers, out of reach: the
    run is refused before the model is asked anything."""
    shop = Shop()
    support = scripted(shop, ["done"])
    agentguard.guard(support, SPEC)
    support.tools.append(WebSearchTool())
    with pytest.raises(UnsupportedAgentError, match="WebSearchTool"):
        Runner.run_sync(support, "search")
    assert support.model.remaining == 1


def _rejecting_first() -> ToolInputGuardrail[Any]:
    """The user's own tool input guardrail: it rejects the first call it sees."""
    seen: list[str] = []

    async def check(data: Any) -> ToolGuardrailFunctionOutput:
        seen.append(data.context.tool_call_id)
        if len(seen) == 1:
            return ToolGuardrailFunctionOutput.reject_content("The reviewer said no.")
        return ToolGuardrailFunctionOutput.allow()

    return ToolInputGuardrail(check, name="reviewer")


def test_a_call_the_users_guardrail_rejects_is_withdrawn(tmp_path: Path) -> None:
    """The user's guardrail rejects the first refund after agentguard allowed it: that
    call never ran, so it is withdrawn at once (it stayed in flight: the second refund
    was refused under 'at most one', and finishing waited start_timeout)."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    shop.issue_refund.tool_input_guardrails = [_rejecting_first()]
    support = scripted(shop, [VERIFY, REFUND, call("issue_refund", order_id="B", amount=1.0), "ok"])
    guarded(support, SPEC, log, start_timeout=STALL)
    began = time.monotonic()
    result = Runner.run_sync(support, "refund")
    assert time.monotonic() - began < STALL / 3
    assert result.final_output == "ok"
    assert shop.ran[-1] == ("issue_refund", {"order_id": "B", "amount": 1.0})
    assert "The reviewer said no." in support.model.observations[2]
    withdrawn = [line for line in log_lines(log) if line["event"] == "agentguard.withdrawn"]
    assert [line["tool"] for line in withdrawn] == ["issue_refund"]
    assert "did not run it" in withdrawn[0]["message"]
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_parallel_sibling_is_not_held_by_a_rejected_call(tmp_path: Path) -> None:
    """[verify, refund] in one turn; the user's guardrail rejects the verification: the
    refund, approved beside it, is re-judged at once on what ran (refused), instead of
    waiting start_timeout for a call that will never run."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    shop.verify_identity.tool_input_guardrails = [_rejecting_first()]
    support = scripted(shop, [[VERIFY, REFUND], "ok"])
    guarded(support, SPEC, log, start_timeout=STALL)
    began = time.monotonic()
    Runner.run_sync(support, "refund")
    assert time.monotonic() - began < STALL / 3
    assert shop.ran == []
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_call_whose_hook_raises_before_it_runs_is_withdrawn(tmp_path: Path) -> None:
    """The agent's own on_tool_start hook raises after agentguard allowed the call: the
    run fails, the call never ran and is withdrawn at once (finishing the run waited
    start_timeout and logged it as started but unfinished)."""

    class Refuse(AgentHooks[Any]):
        async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
            raise RuntimeError("the hook refuses")

    shop = Shop()
    log = tmp_path / "d.jsonl"
    support = guarded(
        scripted(shop, [VERIFY, "ok"], hooks=Refuse()), SPEC, log, start_timeout=STALL
    )
    with pytest.raises(Exception, match="the hook refuses"):
        Runner.run_sync(support, "verify")
    began = time.monotonic()
    (report,) = support.agentguard.finish_running()
    assert time.monotonic() - began < STALL / 3
    assert shop.ran == [] and report.trace.names == ()
    (withdrawn,) = [line for line in log_lines(log) if line["event"] == "agentguard.withdrawn"]
    assert withdrawn["tool"] == "verify_identity"
    assert "before its function ran" in withdrawn["message"]
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_streamed_runs_are_gated_like_others(tmp_path: Path) -> None:
    """Runner.run_streamed: the same checks (the forced wipe stopped, the run finished)."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, WIPE, "done"]), SPEC, log)

    async def stream() -> None:
        result = Runner.run_streamed(support, "clean up")
        async for _ in result.stream_events():
            pass

    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        asyncio.run(stream())
    assert shop.names == ["verify_identity"]
    assert support.agentguard.running == ()
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_call_sent_to_a_human_does_not_hold_its_turn(tmp_path: Path) -> None:
    """[verify, refund] in one turn, the verification sent to a human by its approval
    policy: the refund, approved beside it, is judged again at once (refused: nothing was
    verified) instead of waiting start_timeout; after the approval the verification runs
    and the retried refund is allowed. A call the policy lets through keeps its turn's
    order ([verify C2, wipe] both run)."""
    shop = Shop()
    log = tmp_path / "d.jsonl"

    async def ask_for_c1(context: Any, params: dict[str, Any], call_id: str) -> bool:
        return params.get("customer_id") == "C1"

    shop.verify_identity.needs_approval = ask_for_c1
    unforced = call("wipe", path="/tmp", force=False)
    script = [[VERIFY, REFUND], REFUND, [call("verify_identity", customer_id="C2"), unforced], "ok"]
    support = guarded(scripted(shop, script), SPEC, log, start_timeout=STALL)
    began = time.monotonic()
    assert asyncio.run(run_approving(support, "refund")).final_output == "ok"
    assert time.monotonic() - began < STALL / 3
    assert shop.names == ["verify_identity", "issue_refund", "verify_identity", "wipe"]
    report = support.agentguard.report
    refunds = [d.action for d in report.decisions if d.tool == "issue_refund"]
    assert refunds == [Action.ALLOW, Action.BLOCK, Action.ALLOW]  # beside, re-judged, retried
    withdrawn = [line for line in log_lines(log) if line["event"] == "agentguard.withdrawn"]
    assert "waits for a human's approval" in withdrawn[0]["message"]
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_a_call_checked_before_its_approval_is_judged_again_when_it_runs(
    tmp_path: Path,
) -> None:
    """With pre_approval_tool_input_guardrails the guardrail runs before the human is
    asked: that decision is withdrawn when the run pauses (it was left started, and the
    resumed run was another firewall), and the approved call is judged again, in the
    same run, when it runs after the resume."""
    from agents import RunConfig
    from agents.run_config import ToolExecutionConfig

    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, REFUND, "Refunded."]), SPEC, log)
    config = RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True))
    result = asyncio.run(run_approving(support, "refund", run_config=config))
    assert result.final_output == "Refunded."
    assert shop.names == ["verify_identity", "issue_refund"]
    refund = [(e["event"], e["action"]) for e in log_lines(log) if e.get("tool") == "issue_refund"]
    assert refund == [
        ("agentguard.decision", "allow"),
        ("agentguard.withdrawn", "withdrawn"),
        ("agentguard.decision", "allow"),
        ("agentguard.result", "executed"),
    ]
    assert len(support.agentguard.reports) == 1 and support.agentguard.running == ()
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)
