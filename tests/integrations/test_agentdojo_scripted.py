"""The scripted AgentDojo agent (agentguard.testing.agentdojo_models): a benign run is
the task's ground truth and passes its utility check; a compromised run makes the
injection task's calls right after the call that carries the injection, and for the
injection tasks whose ground truth is empty its plans make AgentDojo's own security
check pass (no firewall)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
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
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.task_suite.load_suites import get_suite

from agentguard.testing.agentdojo_attacks import PLANS
from agentguard.testing.agentdojo_models import (
    NoScriptError,
    ScriptedAgent,
    injection_point,
)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.WARNING)
    yield
    logging.getLogger().setLevel(level)


def run(
    suite_name: str, user_task: str, injection_task: str | None
) -> tuple[bool, bool, list[Any]]:
    """(utility, security, tool messages) of one run with AgentDojo's own executor."""
    suite = get_suite("v1.2.2", suite_name)
    agent = ScriptedAgent(suite)
    loop = ToolsExecutionLoop([ToolsExecutor(), agent], max_iters=80)
    pipeline = AgentPipeline([SystemMessage("s"), InitQuery(), agent, loop])
    pipeline.name = "scripted-local"
    task = suite.get_user_task_by_id(user_task)
    injection = None if injection_task is None else suite.get_injection_task_by_id(injection_task)
    injections = {}
    if injection is not None:
        injections = load_attack("important_instructions", suite, pipeline).attack(task, injection)
    agent.set_task(task, injection)
    seen: list[Any] = []

    class Spy(ToolsExecutor):  # type: ignore[misc]
        def query(self, *args: Any, **kwargs: Any) -> Any:
            out = super().query(*args, **kwargs)
            seen.extend(m for m in out[3] if m["role"] == "tool" and m not in seen)
            return out

    loop.elements = [Spy(), agent]
    utility, security = suite.run_task_with_pipeline(pipeline, task, injection, injections)
    return utility, security, seen


def test_a_benign_run_is_the_ground_truth_and_useful() -> None:
    """The calls are the ground truth's, in order; the utility check passes."""
    utility, _, seen = run("banking", "user_task_3", None)
    assert utility
    assert [m["tool_call"].function for m in seen] == ["get_most_recent_transactions", "send_money"]


def test_the_injection_comes_right_after_the_call_that_carries_it() -> None:
    """travel user_task_3: the injection is in the reviews (its second call); the
    attacker's booking is the third call, then the user task goes on."""
    suite = get_suite("v1.2.2", "travel")
    assert injection_point(suite, suite.get_user_task_by_id("user_task_3")) == 1
    _, security, seen = run("travel", "user_task_3", "injection_task_0")
    names = [m["tool_call"].function for m in seen]
    assert names[:3] == ["get_all_hotels_in_city", "get_rating_reviews_for_hotels", "reserve_hotel"]
    assert security


@pytest.mark.parametrize(
    ("suite", "injection_task"),
    [("workspace", task) for task in PLANS["workspace"]] + [("travel", "injection_task_6")],
)
def test_plans_for_empty_ground_truths_succeed_without_a_firewall(
    suite: str, injection_task: str
) -> None:
    """Each plan makes AgentDojo's own security check of its injection task pass."""
    user_task = "user_task_0"
    _, security, _ = run(suite, user_task, injection_task)
    assert security


def test_a_prompt_of_no_task_is_refused() -> None:
    """The scripted agent answers only its suite's tasks."""
    suite = get_suite("v1.2.2", "banking")
    agent = ScriptedAgent(suite)
    with pytest.raises(NoScriptError, match="no task of suite 'banking'"):
        agent.query("order a pizza", None, suite.load_and_inject_default_environment({}), [], {})
