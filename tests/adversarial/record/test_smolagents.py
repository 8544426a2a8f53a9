"""smolagents: a conversation continued with ``run(reset=False)`` is one run on one
chain, so cutting its first turn, or the violating tail of it, fails ``audit verify``
(issue 25, 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.cli.main import main
from agentguard.enforcement.audit import verify_lines
from tests.adversarial._smolagents_support import RAN, assert_invariants, code_agent

KEY = "k3y"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def two_turns(tmp_path: Path) -> tuple[Path, list[str]]:
    """Turn 1 refunds, is refused a ``wipe`` (the violation someone wants gone) and
    answers; turn 2, ``run(reset=False)``, lists a directory and answers."""
    agent = code_agent(
        [
            "refund('A')",
            "wipe()",
            "final_answer('refunded')",
            "shell('ls /tmp')\nfinal_answer('listed')",
        ],
        tmp_path,
        log_key=KEY,
    )
    agent.run("refund A")
    agent.run("list /tmp", reset=False)
    assert [name for name, _ in RAN] == ["refund", "shell"]
    assert_invariants(agent.agentguard, tmp_path)
    log = agent.agentguard.log_path
    assert log is not None
    return log, log.read_text().splitlines()


def audit(path: Path, lines: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    """``agentguard audit verify --key KEY --require-finish`` of ``lines`` written there."""
    path.write_text("".join(f"{line}\n" for line in lines))
    status = main(["audit", "verify", "--key", KEY, "--require-finish", str(path)])
    capsys.readouterr()
    return status


def test_two_turns_are_one_chain_that_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run id, ``seq`` 0.. without a restart, and the CLI verifies it with the key."""
    _, lines = two_turns(tmp_path)
    records = [json.loads(line) for line in lines]
    assert len({r["run_id"] for r in records}) == 1
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert verify_lines(lines, key=KEY.encode(), require_finish=True).ok
    assert audit(tmp_path / "copy.jsonl", lines, capsys) == 0


def test_cutting_the_first_turn_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Turn 2 alone (turn 1 deleted) no longer verifies."""
    _, lines = two_turns(tmp_path)
    first_finish = next(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    assert audit(tmp_path / "cut.jsonl", lines[first_finish + 1 :], capsys) != 0


def test_cutting_the_violating_tail_of_the_first_turn_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Turn 1 without its refusal and what followed (turn 2 kept) no longer verifies."""
    _, lines = two_turns(tmp_path)
    blocked = next(i for i, line in enumerate(lines) if '"action":"block"' in line)
    first_finish = next(i for i, line in enumerate(lines) if '"agentguard.finish"' in line)
    tampered = lines[:blocked] + lines[first_finish + 1 :]
    assert audit(tmp_path / "tail.jsonl", tampered, capsys) != 0


def test_a_call_its_tool_cannot_take_never_enters_the_trace(tmp_path: Path) -> None:
    """``refund(order='A')`` fails binding before the tool's body: it was recorded as an
    executed call (with its TypeError); it is refused before any check, and the model
    reads why."""
    agent = code_agent(["refund(order='A')", "refund()", "final_answer('done')"], tmp_path)
    agent.run("refund")
    assert RAN == []
    assert [c.name for c in agent.agentguard.report.trace] == ["final_answer"]
    assert not [d for d in agent.agentguard.report.decisions if d.tool == "refund"]
    assert "unexpected argument(s) order" in "\n".join(
        str(getattr(s, "error", "")) for s in agent.memory.steps
    )
    assert_invariants(agent.agentguard, tmp_path)
