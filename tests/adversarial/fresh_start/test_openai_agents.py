"""OpenAI Agents SDK: a run paused for a human's approval and resumed with its
``RunState`` is the same run (same firewall, counts and stops, one log chain); a resume
of a run that ended, or of one agentguard does not hold, is refused and logged, never
judged by a fresh firewall."""

from __future__ import annotations

import asyncio
import json
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
    OutputGuardrailTripwireTriggered,
    Runner,
    RunState,
    ToolInputGuardrailTripwireTriggered,
)

import agentguard  # noqa: E402
from agentguard.enforcement.decision import Action  # noqa: E402
from agentguard.testing.openai_agents_models import call  # noqa: E402

__all__ = ["sdk_defaults"]

SPEC = agentguard.parse_spec(
    """
constraint one_refund severity HARD_STOP message "At most one refund per run."
  := CalledN(issue_refund, 1, <=)
constraint identity_first severity SOFT_BLOCK
  := G(issue_refund -> O verify_identity(result.verified = true))
"""
)
VERIFY = call("verify_identity", customer_id="C1")


def refund(order: str) -> Any:
    return call("issue_refund", order_id=order, amount=5.0)


def test_a_resumed_run_keeps_its_count_across_the_pause(tmp_path: Path) -> None:
    """Each refund waits for approval; after the first ran, the second is stopped by
    'at most one' (each resume used to start a fresh firewall: both refunds ran)."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, refund("A"), refund("B"), "done"]), SPEC, log)
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        asyncio.run(run_approving(support, "refund A and B"))
    assert caught.value.output.output_info.action is Action.STOP
    assert shop.names == ["verify_identity", "issue_refund"]
    guard = support.agentguard
    assert len(guard.reports) == 1 and guard.running == ()
    assert guard.report.stopped
    assert_invariants(shop, guard.report, SPEC, log, tmp_path)


def test_a_verification_before_the_pause_licenses_the_refund_after_it(tmp_path: Path) -> None:
    """The verification ran before the pause; the approved refund after it is allowed
    (a fresh firewall after the resume refused it: it had forgotten the verification)."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, refund("A"), "Refunded."]), SPEC, log)
    result = asyncio.run(run_approving(support, "refund A"))
    assert result.final_output == "Refunded."
    assert shop.names == ["verify_identity", "issue_refund"]
    report = support.agentguard.report
    assert report.trace.names == ("verify_identity", "issue_refund", "final_answer")
    assert report.compliance.score == 1.0 and support.agentguard.running == ()
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_a_resume_from_json_in_the_same_process_continues_the_run(tmp_path: Path) -> None:
    """The state written as JSON and read back (a new context, a new usage object) is
    still the same run: its second refund is stopped."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, refund("A"), refund("B"), "done"]), SPEC, log)

    async def scenario() -> None:
        result = await Runner.run(support, "refund")
        while result.interruptions:
            text = json.dumps(result.to_state().to_json())
            state = await RunState.from_json(support, json.loads(text))
            for item in state.get_interruptions():
                state.approve(item)
            result = await Runner.run(support, state)

    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        asyncio.run(scenario())
    assert shop.names == ["verify_identity", "issue_refund"]
    assert len(support.agentguard.reports) == 1 and support.agentguard.running == ()
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_resuming_an_ended_run_again_is_refused_by_that_run(tmp_path: Path) -> None:
    """The same paused state resumed a second time, after the run ended: its refund is
    refused by the ended run's firewall and logged on the run's chain; nothing runs, no
    second run appears."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, refund("A"), "done", "again"]), SPEC, log)

    async def scenario() -> str:
        result = await Runner.run(support, "refund")
        saved = json.dumps(result.to_state().to_json())
        state = await RunState.from_json(support, json.loads(saved))
        for item in state.get_interruptions():
            state.approve(item)
        await Runner.run(support, state)
        replay = await RunState.from_json(support, json.loads(saved))
        for item in replay.get_interruptions():
            replay.approve(item)
        await Runner.run(support, replay)
        return "not refused"

    with pytest.raises(OutputGuardrailTripwireTriggered):
        asyncio.run(scenario())
    assert shop.names == ["verify_identity", "issue_refund"]
    guard = support.agentguard
    assert len(guard.reports) == 1 and guard.running == ()
    lines = log_lines(log)
    assert {line["run_id"] for line in lines} == {guard.report.run_id}
    late = [line for line in lines if line.get("tool") == "issue_refund"][-1]
    assert late["event"] == "agentguard.decision" and late["action"] == "block"
    assert "already ended" in late["message"]
    assert_invariants(shop, guard.report, SPEC, log, tmp_path)


def test_a_state_resumed_by_a_guard_without_its_run_is_refused(tmp_path: Path) -> None:
    """A RunState resumed where agentguard does not hold its run (another process, no
    restore): the approved refund is refused, never judged by a fresh firewall."""
    shop = Shop(approval=("issue_refund",))
    first = guarded(scripted(shop, [refund("A")]), SPEC, tmp_path / "a.jsonl")
    saved = asyncio.run(Runner.run(first, "refund")).to_state().to_json()

    log = tmp_path / "b.jsonl"
    elsewhere = guarded(scripted(shop, ["done"]), SPEC, log)

    async def resume() -> Any:
        state = await RunState.from_json(elsewhere, saved)
        for item in state.get_interruptions():
            state.approve(item)
        return await Runner.run(elsewhere, state)

    with pytest.raises(OutputGuardrailTripwireTriggered):
        asyncio.run(resume())
    assert shop.ran == []
    refused = [line for line in log_lines(log) if line.get("tool") == "issue_refund"]
    assert [line["action"] for line in refused] == ["block"]
    assert "continues a run agentguard does not hold" in elsewhere.model.observations[-1]


def test_a_run_saved_and_restored_elsewhere_keeps_its_count(tmp_path: Path) -> None:
    """save_run / restore_run carry the paused run to another guard (another process):
    the resumed run goes on with the same firewall state and the same log chain."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    first = guarded(scripted(shop, [VERIFY, refund("A"), refund("B")]), SPEC, log)

    async def part_one() -> tuple[Any, dict[str, Any]]:
        result = await Runner.run(first, "refund")
        state = result.to_state()
        for item in state.get_interruptions():
            state.approve(item)
        result = await Runner.run(first, state)  # the first refund runs, then a pause
        return result.to_state().to_json(), first.agentguard.save_run(result)

    state_json, document = asyncio.run(part_one())
    assert shop.names == ["verify_identity", "issue_refund"]

    elsewhere = guarded(scripted(shop, ["done"]), SPEC, log)
    elsewhere.agentguard.restore_run(json.loads(json.dumps(document)))

    async def part_two() -> Any:
        state = await RunState.from_json(elsewhere, state_json)
        for item in state.get_interruptions():
            state.approve(item)
        return await Runner.run(elsewhere, state)

    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        asyncio.run(part_two())
    assert shop.names == ["verify_identity", "issue_refund"]
    guard = elsewhere.agentguard
    assert len(guard.reports) == 1 and guard.running == ()
    assert guard.report.run_id == document["firewall"]["run_id"]
    assert_invariants(shop, guard.report, SPEC, log, tmp_path)


def test_a_rejected_approval_ends_in_one_finished_run(tmp_path: Path) -> None:
    """The human rejects the refund: it never runs and is not in the trace; the resumed
    run is the paused one, finished once (the paused part used to be left unfinished)."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, refund("A"), "Not refunded."]), SPEC, log)
    result = asyncio.run(run_approving(support, "refund", approve=False))
    assert result.final_output == "Not refunded."
    assert shop.names == ["verify_identity"]
    guard = support.agentguard
    assert len(guard.reports) == 1 and guard.running == ()
    assert guard.report.trace.names == ("verify_identity", "final_answer")
    assert_invariants(shop, guard.report, SPEC, log, tmp_path)


def test_a_state_resumed_twice_at_once_runs_its_call_once(tmp_path: Path) -> None:
    """Two resumes of one paused state at the same time: one refund runs; the replayed
    one is refused and logged (each resume used to get its own firewall: both ran)."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    lenient = agentguard.parse_spec("constraint no_wipe := G !wipe")
    support = guarded(scripted(shop, [refund("A"), "done", "done again"]), lenient, log)

    async def twice() -> list[Any]:
        saved = (await Runner.run(support, "refund")).to_state().to_json()

        async def resume() -> Any:
            state = await RunState.from_json(support, saved)
            for item in state.get_interruptions():
                state.approve(item)
            return await Runner.run(support, state)

        return list(await asyncio.gather(resume(), resume(), return_exceptions=True))

    outcomes = asyncio.run(twice())
    assert shop.names == ["issue_refund"]
    assert sorted(type(o).__name__ for o in outcomes) == [
        "OutputGuardrailTripwireTriggered",
        "RunResult",
    ]
    withdrawn = [
        line["message"]
        for line in log_lines(log)
        if line["event"] == "agentguard.withdrawn" and line["tool"] == "issue_refund"
    ]  # (the replay's answer may be withdrawn too: the other resume ended the run first)
    assert ["already run in this run" in message for message in withdrawn] == [True]
    assert len(support.agentguard.reports) == 1
    assert_invariants(shop, support.agentguard.report, lenient, log, tmp_path)


@pytest.mark.parametrize("runner", ["run_sync", "run_streamed"])
def test_sync_and_streamed_resumes_continue_the_run(tmp_path: Path, runner: str) -> None:
    """The approval loop through Runner.run_sync, or Runner.run_streamed: the same run
    goes on across the pause, so the second refund is stopped."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    support = guarded(scripted(shop, [VERIFY, refund("A"), refund("B"), "done"]), SPEC, log)

    async def streamed(task: Any) -> Any:
        result = Runner.run_streamed(support, task)
        async for _ in result.stream_events():
            pass
        return result

    def run(task: Any) -> Any:
        if runner == "run_sync":
            return Runner.run_sync(support, task)
        return asyncio.run(streamed(task))

    def approving() -> Any:
        result = run("refund A and B")
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                state.approve(item)
            result = run(state)
        return result

    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        approving()
    assert shop.names == ["verify_identity", "issue_refund"]
    assert len(support.agentguard.reports) == 1 and support.agentguard.running == ()
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)


def test_a_nested_agent_paused_for_approval_is_one_run_with_its_caller(tmp_path: Path) -> None:
    """The helper agent (a tool of the outer agent) waits for approval of its refund;
    resumed, the refund runs once and the outer agent's own refund is the second of the
    run: stopped. The helper's tool call, paused and run again, is in the trace once."""
    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"
    helper = scripted(shop, [refund("A"), "helper refunded"], name="helper")
    helper.tools = [shop.issue_refund]
    outer = scripted(shop, [VERIFY, call("helper", input="refund A"), refund("B"), "done"])
    outer.tools = [shop.verify_identity, shop.issue_refund, helper.as_tool("helper", "h")]
    guarded(outer, SPEC, log)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        asyncio.run(run_approving(outer, "refund twice"))
    assert shop.names == ["verify_identity", "issue_refund"]
    report = outer.agentguard.report
    assert report.trace.names == ("verify_identity", "issue_refund", "helper")
    assert outer.agentguard.running == ()
    assert_invariants(shop, report, SPEC, log, tmp_path)


def test_a_provider_reusing_call_ids_across_runs_resumes_the_right_run(
    tmp_path: Path,
) -> None:
    """A provider numbering its calls call_0, call_1... in every run: the second run,
    paused and resumed, continues itself (not the first run, which ended: its calls
    would have been refused), and its second refund is stopped."""
    from agentguard.testing.openai_agents_models import call_with_id

    shop = Shop(approval=("issue_refund",))
    log = tmp_path / "d.jsonl"

    def numbered(order: str, n: int) -> Any:
        return call_with_id(f"call_{n}", "issue_refund", order_id=order, amount=5.0)

    verify = call_with_id("call_0", "verify_identity", customer_id="C1")
    script = [verify, numbered("A", 1), "first done", verify, numbered("B", 1), numbered("C", 2)]
    support = guarded(scripted(shop, [*script, "second done"]), SPEC, log)
    asyncio.run(run_approving(support, "first"))
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        asyncio.run(run_approving(support, "second"))
    assert [args["order_id"] for name, args in shop.ran if name == "issue_refund"] == ["A", "B"]
    first, second = support.agentguard.reports
    assert second.stopped and support.agentguard.running == ()
    for report in (first, second):
        assert_invariants(None, report, SPEC, log, tmp_path)
