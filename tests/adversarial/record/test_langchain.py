"""LangChain: the record is verifiable. A thread's checkpointed state is tied to its spec
by meaning (a comment neither lifts a stop nor refuses the state), and a continued thread
continues its run's hash chain across invocations, and across processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action
from agentguard.language import parse_spec
from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.adversarial._langchain_kit import (
    Ran,
    assert_invariants,
    log_lines,
    saver_to_file,
    spec_file,
)
from tests.integrations.adapters import AgentGuardMiddleware

SPEC = """
spec record
constraint no_prod severity HARD_STOP := G !delete_path(path ~ /prod/)
constraint looked severity SOFT_BLOCK(3) := G(refund -> O lookup)
"""

COMMENTED = """
# the same rules, reworded comments and layout only
spec record

constraint no_prod   severity HARD_STOP := G !delete_path(path ~ /prod/)  # never prod
constraint looked severity SOFT_BLOCK(3)
  := G(refund -> O lookup)
"""

RAN: Ran = []
CONFIG: Any = {"configurable": {"thread_id": "t"}}


@tool
def delete_path(path: str) -> str:
    """Delete a path."""
    RAN.append(("delete_path", {"path": path}))
    return "deleted"


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    RAN.append(("lookup", {"order_id": order_id}))
    return "found"


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    RAN.append(("refund", {"order_id": order_id}))
    return "refunded"


TOOLS = [delete_path, lookup, refund]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _agent(guard: Any, script: list[Any], saver: Any, *extra: Any) -> Any:
    return create_agent(
        ScriptedChatModel(script), TOOLS, middleware=[guard, *extra], checkpointer=saver
    )


def _ask(agent: Any, text: str) -> Any:
    return agent.invoke({"messages": [HumanMessage(text)]}, CONFIG)


@pytest.mark.parametrize("on_change", ["rejudge", "error"])
def test_a_comment_neither_lifts_a_stop_nor_refuses_the_thread(
    tmp_path: Path, on_change: str
) -> None:
    """A thread stopped under SPEC continues under the same rules with other comments: it
    stays stopped (under "rejudge" the stop used to be lifted, as the stopped call never
    ran, and the next delete ran; under "error" the thread was refused)."""
    saver = InMemorySaver()
    first = AgentGuardMiddleware(parse_spec(SPEC))
    _ask(_agent(first, [call("delete_path", path="/prod/db"), "x"], saver), "clean")
    stopped = first.session_for("t")
    assert stopped is not None and stopped.stop is not None
    second = AgentGuardMiddleware(parse_spec(COMMENTED), on_spec_change=on_change)  # type: ignore[arg-type]
    _ask(_agent(second, [call("delete_path", path="/tmp/x"), "done"], saver), "clean tmp")
    assert RAN == []
    session = second.session_for("t")
    assert session is not None and session.report is not None
    assert all(not d.executes for d in session.attempts if d.tool == "delete_path")


def _three_turns(guard: Any, saver: Any) -> None:
    _ask(_agent(guard, [call("lookup", order_id="A"), "looked"], saver), "look A up")
    _ask(_agent(guard, [call("refund", order_id="A"), "refunded"], saver), "refund A")
    _ask(_agent(guard, [call("delete_path", path="/prod/x"), "no"], saver), "delete prod")


def _assert_one_chain(log: Path) -> None:
    """Every line of the log is on one run's chain: seq 0, 1, 2, ... and it verifies,
    finish required."""
    lines = log.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len({r["run_id"] for r in records}) == 1
    assert [r["seq"] for r in records] == list(range(len(records)))
    result = verify_lines(lines, require_finish=True)
    assert result.ok, result


def test_a_continued_thread_continues_its_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three invocations of one thread restore the checkpointed firewall state each time;
    the log is one chain (each restored run used to restart at seq 0)."""
    spec = spec_file(tmp_path, SPEC)
    guard = AgentGuardMiddleware(spec[0], log_path=tmp_path / "d.jsonl")
    _three_turns(guard, InMemorySaver())
    _assert_one_chain(tmp_path / "d.jsonl")
    session = guard.session_for("t")
    assert session is not None
    report = assert_invariants(session.report, spec, RAN, tmp_path, capsys)
    assert report.decisions[-1].action is Action.STOP


SECOND_PROCESS = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from langchain_core.messages import HumanMessage
    from langgraph.types import Command
    from agentguard.testing.langchain_models import ScriptedChatModel, call
    from tests.adversarial._langchain_kit import assert_invariants, saver_from_file, spec_file
    from tests.adversarial.record import test_langchain as here

    where = Path(sys.argv[1])
    mode = sys.argv[2]
    spec = spec_file(where, here.SPEC)
    guard = here.AgentGuardMiddleware(spec[0], log_path=where / "d.jsonl")
    saver = saver_from_file(where / "saver.pickle")
    if mode == "resume":
        human = here.HumanInTheLoopMiddleware(interrupt_on={"refund": True})
        agent = here._agent(guard, ["refunded"], saver, human)
        resume = {"decisions": [{"type": "approve"}]}
        agent.invoke(Command(resume=resume), here.CONFIG)
    else:
        agent = here._agent(guard, [call("refund", order_id="A"), "refunded"], saver)
        here._ask(agent, "refund A")
    session = guard.session_for("t")
    assert session is not None and session.report is not None
    ran = [("lookup", {"order_id": "A"}), *here.RAN]  # the lookup ran in the first process
    assert_invariants(session.report, spec, ran, where)
    print(",".join(session.report.trace.names))
    """
)


@pytest.mark.parametrize("mode", ["next_turn", "resume"])
def test_a_thread_continued_in_another_process_continues_its_chain(
    tmp_path: Path, mode: str
) -> None:
    """A second process (only the checkpoint and the log file shared) continues the thread
    (its next turn, or a run resumed after a reviewer's approval): one chain."""
    spec = spec_file(tmp_path, SPEC)
    saver = InMemorySaver()
    guard = AgentGuardMiddleware(spec[0], log_path=tmp_path / "d.jsonl")
    if mode == "resume":
        human = HumanInTheLoopMiddleware(interrupt_on={"refund": True})
        script = [call("lookup", order_id="A"), call("refund", order_id="A")]
        out = _ask(_agent(guard, script, saver, human), "refund A")
        assert out["__interrupt__"]
    else:
        _ask(_agent(guard, [call("lookup", order_id="A"), "looked"], saver), "look A up")
    saver_to_file(saver, tmp_path / "saver.pickle")
    done = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, str(tmp_path), mode],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    names = done.stdout.strip().splitlines()[-1].split(",")
    assert [n for n in names if n != "final_answer"] == ["lookup", "refund"]
    _assert_one_chain(tmp_path / "d.jsonl")
    lines = log_lines(tmp_path / "d.jsonl")
    results = [r["tool"] for r in lines if r["event"] == "agentguard.result"]
    assert results.count("refund") == 1
