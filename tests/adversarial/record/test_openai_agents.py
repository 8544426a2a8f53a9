"""OpenAI Agents SDK: a run paused for approval and resumed is one run in the decision
log, one chain from its first line to its finish, so removing the part before the pause
(or any line of it, or the end) fails ``audit verify``; online = offline holds for it."""

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
    scripted,
    sdk_defaults,
)

agents = pytest.importorskip("agents")
from agents import Runner, RunState  # noqa: E402

import agentguard  # noqa: E402
from agentguard.cli.main import EXIT_OK, main  # noqa: E402
from agentguard.enforcement.audit import verify_lines  # noqa: E402
from agentguard.testing.openai_agents_models import call  # noqa: E402

__all__ = ["sdk_defaults"]

SPEC_TEXT = """
constraint identity_first severity SOFT_BLOCK
  := G(issue_refund -> O verify_identity(result.verified = true))
constraint small_refunds severity SOFT_BLOCK := G !issue_refund(amount > 500)
"""
SPEC = agentguard.parse_spec(SPEC_TEXT)
VERIFY = call("verify_identity", customer_id="C1")
BIG = call("issue_refund", order_id="A1", amount=900.0)
REFUND = call("issue_refund", order_id="A1", amount=5.0)


def _paused_then_resumed(tmp_path: Path, *, via_json: bool) -> tuple[Any, Path, int]:
    """verify; a big refund refused; the refund waits for approval (the pause); resumed
    from its state, it runs. Returns the agent, the log, and its line count at the pause."""
    shop = Shop()
    log = tmp_path / "d.jsonl"
    shop.issue_refund.needs_approval = _small_ones_wait
    support = guarded(scripted(shop, [VERIFY, BIG, REFUND, "Refunded."]), SPEC, log)

    async def scenario() -> int:
        result = await Runner.run(support, "refund")
        at_pause = len(log.read_text().splitlines())
        state = result.to_state()
        if via_json:
            state = await RunState.from_json(support, json.loads(json.dumps(state.to_json())))
        for item in state.get_interruptions():
            state.approve(item)
        await Runner.run(support, state)
        return at_pause

    at_pause = asyncio.run(scenario())
    assert_invariants(shop, support.agentguard.report, SPEC, log, tmp_path)
    return support, log, at_pause


async def _small_ones_wait(context: Any, params: dict[str, Any], call_id: str) -> bool:
    """Small refunds wait for a human; big ones go straight to agentguard (refused)."""
    return float(params.get("amount", 0)) <= 500


@pytest.mark.parametrize("via_json", [False, True])
def test_a_paused_and_resumed_run_is_one_finished_chain(tmp_path: Path, via_json: bool) -> None:
    """One run id from the first line to the finish, every run finished (each resume
    used to open a new run and leave the paused one unfinished)."""
    support, log, at_pause = _paused_then_resumed(tmp_path, via_json=via_json)
    lines = log.read_text().splitlines()
    assert 0 < at_pause < len(lines)
    assert {line["run_id"] for line in log_lines(log)} == {support.agentguard.report.run_id}
    assert verify_lines(lines, require_finish=True).ok
    assert main(["audit", "verify", "--require-finish", str(log)]) == EXIT_OK


def test_removing_the_part_before_the_pause_fails(tmp_path: Path) -> None:
    """The verification and the refused refund sat before the pause: cutting them out
    leaves a chain that starts mid-run, and verification fails (the resumed part was a
    run of its own that verified alone)."""
    _, log, at_pause = _paused_then_resumed(tmp_path, via_json=True)
    lines = log.read_text().splitlines()
    assert not verify_lines(lines[at_pause:], require_finish=True).ok


def test_removing_the_refusal_before_the_pause_fails(tmp_path: Path) -> None:
    """Deleting only the refused big refund (the line someone wants gone) breaks the
    chain where the resumed part continues it."""
    _, log, _ = _paused_then_resumed(tmp_path, via_json=True)
    lines = log.read_text().splitlines()
    refused = next(i for i, line in enumerate(lines) if '"action":"block"' in line)
    assert not verify_lines(lines[:refused] + lines[refused + 1 :], require_finish=True).ok


def test_the_check_of_the_log_is_the_runs_report(tmp_path: Path, capsys: Any) -> None:
    """``agentguard check SPEC LOG`` scores the one resumed run as the firewall did."""
    support, log, _ = _paused_then_resumed(tmp_path, via_json=False)
    spec_file = tmp_path / "spec.ltl"
    spec_file.write_text(SPEC_TEXT)
    capsys.readouterr()
    main(["check", "--json", str(spec_file), str(log)])
    checked = json.loads(capsys.readouterr().out)
    (item,) = checked["traces"]
    assert item["report"] == support.agentguard.report.compliance.to_dict()
