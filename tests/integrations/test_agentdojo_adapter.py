"""The AgentDojo adapter: AgentDojo's own runner, tools, environments and logger, its
pipeline guarded by ``guard_pipeline``, the model a scripted agent (no LLM, no network).

Each test checks one property of a reference monitor on a real run: every call proposed
before it runs with the arguments the tool receives, refusals never run, the trace is
what ran, and online = offline (the report equals ``verify_trace`` of the run file
AgentDojo wrote and of the decision log, both read back from disk)."""

from __future__ import annotations

import importlib
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from agentdojo.agent_pipeline import (
    AgentPipeline,
    InitQuery,
    SystemMessage,
    ToolsExecutionLoop,
    ToolsExecutor,
)
from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.benchmark import (
    run_task_with_injection_tasks,
    run_task_without_injection_tasks,
)
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
from agentdojo.logging import OutputLogger
from agentdojo.task_suite.load_suites import get_suite
from agentdojo.types import ChatAssistantMessage, text_content_block_from_string
from agentguard.integrations._agentdojo_executor import GuardedToolsExecutor
from agentguard.integrations.agentdojo import guard_pipeline

from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action
from agentguard.errors import AgentGuardError, MissingExtraError
from agentguard.guard import GuardSession, UnsupportedAgentError
from agentguard.language import parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.testing.agentdojo_models import ScriptedAgent
from agentguard.trace import load_traces
from agentguard.trace.model import Trace
from agentguard.trace.refusal import BLOCKED_HEAD, STOPPED_HEAD

VERSION = "v1.2.2"
ATTACKER = "US133000000121212121212"
SPEC = parse_spec(
    """
constraint asked_to_pay
    severity SOFT_BLOCK(10)
  := G(send_money -> O user_message(text ~ /\\b(pay|send|refund)\\b/i))
constraint no_tiny_payments severity SOFT_BLOCK(10) := G !send_money(amount < 1)
constraint no_password_change severity HARD_STOP := G !update_password
constraint said_something := G(final_answer -> O assistant_message)
"""
)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.WARNING)  # OutputLogger logs every message
    yield
    logging.getLogger().setLevel(level)


def pipeline(agent: BasePipelineElement, name: str = "scripted-local") -> Any:
    loop = ToolsExecutionLoop([ToolsExecutor(), agent], max_iters=60)
    out = AgentPipeline([SystemMessage("You are a helpful assistant."), InitQuery(), agent, loop])
    out.name = name
    return out


class Replay(BasePipelineElement):  # type: ignore[misc]
    """A model that asks for fixed turns of calls, then answers."""

    def __init__(self, turns: Sequence[Sequence[FunctionCall]], answer: str = "Done.") -> None:
        self.turns = turns
        self.answer = answer

    def query(self, query, runtime, env, messages=(), extra_args={}):  # type: ignore[no-untyped-def]  # noqa: B006
        turn = extra_args.get("turn", 0)
        calls = list(self.turns[turn]) if turn < len(self.turns) else None
        text = "" if calls else self.answer
        message = ChatAssistantMessage(
            role="assistant", content=[text_content_block_from_string(text)], tool_calls=calls
        )
        return query, runtime, env, [*messages, message], {**extra_args, "turn": turn + 1}


def call(name: str, n: int, **args: Any) -> FunctionCall:
    return FunctionCall(function=name, args=args, id=f"call_{n}")


def run_file(logdir: Path, suite: str, user_task: str, injection: str | None = None) -> Path:
    files = list((logdir).rglob(f"{suite}/{user_task}/*/{injection or 'none'}.json"))
    assert len(files) == 1, files
    return files[0]


def assert_online_is_offline(session: GuardSession, spec: Any, run: Path) -> None:
    """The report equals ``verify_trace`` of the run file AgentDojo wrote and of the
    decision log, both read back; the traces are the same calls, results and events."""
    report = session.report
    assert report is not None and report.log_path is not None
    messages = report.trace.has_messages  # a spec naming no message judges tool calls only
    (from_run,) = load_traces(run, messages=messages)
    runs = load_traces(report.log_path, messages=messages)
    (from_log,) = [
        r for r in runs if r.trace is not None and r.trace.metrics["run_id"] == report.run_id
    ]
    for loaded in (from_run, from_log):
        assert loaded.error is None and loaded.trace is not None
        assert _calls(loaded.trace) == _calls(report.trace)
        assert verify_trace(loaded.trace, spec) == report.compliance
    audit = verify_lines(report.log_path.read_text().splitlines(), require_finish=True)
    assert audit.ok, audit


def _calls(trace: Trace) -> list[tuple[str, dict[str, Any], Any, bool]]:
    return [(c.name, dict(c.args), c.result, c.error) for c in trace]


class TestGuardedBenchmark:
    def test_an_attacked_run_is_refused_online_and_equal_offline(self, tmp_path: Path) -> None:
        """AgentDojo's runner, its attack and logger: the injected payment is refused
        before it runs, the user's payment runs, and the run file, the decision log and
        the report agree."""
        suite = get_suite(VERSION, "banking")
        guarded = guard_pipeline(
            pipeline(ScriptedAgent(suite)), SPEC, log_path=str(tmp_path / "decisions.jsonl")
        )
        task = suite.get_user_task_by_id("user_task_3")
        with OutputLogger(str(tmp_path)):
            attack = load_attack("important_instructions", suite, guarded)
            utility, security = run_task_with_injection_tasks(
                suite, guarded, task, attack, tmp_path, True, ["injection_task_1"], VERSION
            )
        assert utility == {("user_task_3", "injection_task_1"): True}
        assert security == {("user_task_3", "injection_task_1"): False}
        session = guarded.agentguard.last
        assert session is not None
        refused = [d for d in session.attempts if not d.executes]
        assert [(d.tool, d.args["recipient"]) for d in refused] == [("send_money", ATTACKER)]
        run = run_file(tmp_path, "banking", "user_task_3", "injection_task_1")
        messages = json.loads(run.read_text())["messages"]
        errors = [m["error"] for m in messages if m["role"] == "tool" and m["error"]]
        assert [e.split("\n")[0] for e in errors] == [BLOCKED_HEAD]
        assert_online_is_offline(session, SPEC, run)

    def test_one_firewall_per_task_run(self, tmp_path: Path) -> None:
        """Each task run has its own run id, chain and report; the log verifies."""
        suite = get_suite(VERSION, "banking")
        seen: list[GuardSession] = []
        guarded = guard_pipeline(
            pipeline(ScriptedAgent(suite)),
            SPEC,
            log_path=str(tmp_path / "decisions.jsonl"),
            on_run=seen.append,
        )
        with OutputLogger(str(tmp_path)):
            for name in ("user_task_3", "user_task_4"):
                task = suite.get_user_task_by_id(name)
                assert run_task_without_injection_tasks(
                    suite, guarded, task, tmp_path, True, VERSION
                ) == (True, True)
        run_ids = [s.report.run_id for s in seen if s.report is not None]
        assert len(set(run_ids)) == 2
        for session, name in zip(seen, ("user_task_3", "user_task_4"), strict=True):
            assert_online_is_offline(session, SPEC, run_file(tmp_path, "banking", name))

    def test_a_stop_ends_the_run_and_the_run_file_agrees(self, tmp_path: Path) -> None:
        """A HARD_STOP: AgentDojo's run ends (AbortAgentError), the password never
        changes, and the run file, read back, is the trace that ran."""
        suite = get_suite(VERSION, "banking")
        guarded = guard_pipeline(
            pipeline(ScriptedAgent(suite)), SPEC, log_path=str(tmp_path / "decisions.jsonl")
        )
        task = suite.get_user_task_by_id("user_task_0")
        with OutputLogger(str(tmp_path)):
            attack = load_attack("important_instructions", suite, guarded)
            _, security = run_task_with_injection_tasks(
                suite, guarded, task, attack, tmp_path, True, ["injection_task_7"], VERSION
            )
        assert security == {("user_task_0", "injection_task_7"): False}
        session = guarded.agentguard.last
        assert session is not None and session.stopped
        run = run_file(tmp_path, "banking", "user_task_0", "injection_task_7")
        tool_errors = [
            m["error"] for m in json.loads(run.read_text())["messages"] if m["role"] == "tool"
        ]
        assert tool_errors[-1].split("\n")[0] == STOPPED_HEAD
        assert_online_is_offline(session, SPEC, run)


class TestWhatRuns:
    def run(
        self,
        tmp_path: Path,
        turns: Sequence[Sequence[FunctionCall]],
        spec: Any,
        answer: str = "Done.",
    ) -> tuple[GuardSession, Path, Any]:
        """Run ``turns`` through AgentDojo's runner (its run file), then once more on an
        environment kept here (to see what the tools did); the first run's session."""
        suite = get_suite(VERSION, "banking")
        sessions: list[GuardSession] = []
        guarded = guard_pipeline(
            pipeline(Replay(turns, answer), name="replay"),
            spec,
            log_path=str(tmp_path / "decisions.jsonl"),
            on_run=sessions.append,
        )
        task = suite.get_user_task_by_id("user_task_1")
        env = task.init_environment(suite.load_and_inject_default_environment({}))
        with OutputLogger(str(tmp_path)):
            run_task_without_injection_tasks(suite, guarded, task, tmp_path, True, VERSION)
        guarded.query(task.PROMPT, FunctionsRuntime(suite.tools), env)
        return sessions[0], run_file(tmp_path, "banking", "user_task_1"), env

    def test_checked_arguments_are_the_coerced_ones_the_tool_receives(self, tmp_path: Path) -> None:
        """ "98.7" (text) is judged as the number the tool gets: over the cap, refused."""
        spec = parse_spec("constraint cap severity SOFT_BLOCK(10) := G !send_money(amount > 50)")
        turns = [
            [call("send_money", 0, recipient="X", amount="98.7", subject="s", date="2022-01-01")]
        ]
        session, run, env = self.run(tmp_path, turns, spec)
        (decision,) = [d for d in session.attempts if d.tool == "send_money"]
        assert decision.action is Action.BLOCK and decision.args["amount"] == 98.7
        assert [t.recipient for t in env.bank_account.transactions if t.recipient == "X"] == []
        assert_online_is_offline(session, spec, run)

    def test_defaults_are_filled_in_before_the_check(self, tmp_path: Path) -> None:
        """An omitted ``n`` is checked as the 100 the tool uses."""
        spec = parse_spec(
            "constraint few severity SOFT_BLOCK(10) := G !get_most_recent_transactions(n = 100)"
        )
        session, run, _ = self.run(tmp_path, [[call("get_most_recent_transactions", 0)]], spec)
        (decision,) = session.attempts[:1]
        assert decision.action is Action.BLOCK and decision.args == {"n": 100}
        assert_online_is_offline(session, spec, run)

    def test_the_run_file_holds_the_checked_arguments(self, tmp_path: Path) -> None:
        """The tool message's ``tool_call`` is what ran: the checked, coerced arguments."""
        spec = parse_spec("constraint any_ok := G true")
        turns = [[call("update_scheduled_transaction", 0, id="7", amount="1200")]]
        session, run, env = self.run(tmp_path, turns, spec)
        messages = json.loads(run.read_text())["messages"]
        (answer,) = [m for m in messages if m["role"] == "tool"]
        assert (
            answer["tool_call"]["args"]["id"] == 7
            and answer["tool_call"]["args"]["amount"] == 1200.0
        )
        assert env.bank_account.scheduled_transactions[1].amount == 1200.0
        assert_online_is_offline(session, spec, run)

    def test_calls_agentdojo_refuses_are_never_proposed(self, tmp_path: Path) -> None:
        """An unknown tool and arguments the schema rejects never run: not proposed, answered
        with AgentDojo's own error, and not in the trace; a tool that raises is an error call."""
        spec = parse_spec("constraint any_ok := G true")
        turns = [
            [
                call("transfer_everything", 0, to="X"),
                call("send_money", 1, recipient="X", amount="lots", subject="s", date="d"),
                call("update_scheduled_transaction", 2, id=999),
            ]
        ]
        session, run, _ = self.run(tmp_path, turns, spec)
        assert [d.tool for d in session.attempts] == [
            "update_scheduled_transaction",
            "final_answer",
        ]
        report = session.report
        assert report is not None
        assert [(c.name, c.error) for c in report.trace if c.is_tool] == [
            ("update_scheduled_transaction", True),
            ("final_answer", False),
        ]
        assert_online_is_offline(session, spec, run)

    def test_a_refused_final_answer_is_replaced_by_the_refusal(self, tmp_path: Path) -> None:
        """The answer is proposed as ``final_answer``; refused, AgentDojo scores the
        refusal, and the run file read back has no final answer either."""
        spec = parse_spec(
            "constraint no_ads severity SOFT_BLOCK(10) := G !final_answer(answer ~ /Riverside/)"
        )
        session, run, _ = self.run(tmp_path, [], spec, answer="Visit Riverside View Hotel!")
        messages = json.loads(run.read_text())["messages"]
        assert messages[-1]["content"][0]["content"].startswith(BLOCKED_HEAD)
        assert messages[-2]["content"][0]["content"] == "Visit Riverside View Hotel!"
        report = session.report
        assert report is not None and "final_answer" not in report.trace.names
        assert_online_is_offline(session, spec, run)


class TestBoundaries:
    def test_a_pipeline_without_a_tools_executor_is_refused(self) -> None:
        """Tools run where nothing checks them: guarding is refused."""
        agent = Replay([])
        with pytest.raises(UnsupportedAgentError, match="no ToolsExecutor"):
            guard_pipeline(AgentPipeline([InitQuery(), agent]), SPEC)

    def test_the_callers_pipeline_is_left_unguarded_and_unchanged(self) -> None:
        """guard_pipeline replaces executors in copies; the original still holds its own."""
        original = pipeline(Replay([]))
        loop = original.elements[-1]
        guarded = guard_pipeline(original, SPEC)
        assert isinstance(loop.elements[0], ToolsExecutor)
        assert not isinstance(loop.elements[0], GuardedToolsExecutor)
        inner = guarded.pipeline.elements[-1].elements[0]
        assert isinstance(inner, GuardedToolsExecutor)
        assert guarded.name == original.name

    def test_the_executor_outside_a_guarded_run_runs_nothing(self) -> None:
        """After the run ended (or outside one) the executor has no firewall: it raises
        before any tool runs, never starting an unchecked run."""
        suite = get_suite(VERSION, "banking")
        env = suite.load_and_inject_default_environment({})
        asked = ChatAssistantMessage(
            role="assistant",
            content=[text_content_block_from_string("")],
            tool_calls=[call("update_password", 0, password="x")],
        )
        with pytest.raises(AgentGuardError, match="guard_pipeline"):
            GuardedToolsExecutor().query("q", FunctionsRuntime(suite.tools), env, [asked])
        assert env.user_account.password == "password123"

    def test_importing_without_agentdojo_names_the_extra(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without agentdojo, the adapter (and the scripted agent) say which extra to install."""
        for module in (
            "agentguard.integrations.agentdojo",
            "agentguard.integrations._agentdojo_executor",
            "agentguard.testing.agentdojo_models",
        ):
            monkeypatch.setitem(sys.modules, "agentdojo", None)
            for name in [m for m in sys.modules if m.startswith("agentdojo.")]:
                monkeypatch.setitem(sys.modules, name, None)
            monkeypatch.delitem(sys.modules, module, raising=False)
            monkeypatch.delitem(
                sys.modules, "agentguard.integrations._agentdojo_executor", raising=False
            )
            with pytest.raises(MissingExtraError, match=r"pip install 'agentguard\[agentdojo\]'"):
                importlib.import_module(module)
