"""A scripted agent for AgentDojo (agentdojo 0.1.35): a pipeline element that stands in
for the LLM, so AgentDojo's own runner, tool executor, environments and checks run with no
model and no network.

:class:`ScriptedAgent` replays a task's ground truth one call per model turn, as
AgentDojo's ``GroundTruthPipeline`` does, but as a model would: it asks for each call and
the pipeline's executor runs it (AgentDojo's ``ToolsExecutor``, or agentguard's guarded
one), then it answers with the task's ``GROUND_TRUTH_OUTPUT``. Put it where the LLM goes::

    agent = ScriptedAgent(suite)
    pipeline = AgentPipeline([SystemMessage("..."), InitQuery(), agent,
                              ToolsExecutionLoop([ToolsExecutor(), agent])])

The task is the one whose prompt the pipeline is given (a user task's ``PROMPT``, or an
injection task's ``GOAL`` when AgentDojo runs one on its own). With an injection task
(:meth:`ScriptedAgent.set_task`, or else the one AgentDojo's ``TraceLogger`` is logging)
it is a *compromised* agent: right after the user task's call whose result carries the
injection (:func:`injection_point`: AgentDojo's way of finding the vectors a task sees,
its ground truth run on canary injections), it makes the injection task's ground-truth
calls, then finishes the user task. An injection task whose ground truth is empty (the
attack's goal needs what the run reads, or is only text) takes its calls from ``attacks``
(:class:`~agentguard.testing.agentdojo_attacks.AttackPlan`; by default the plans of
:mod:`agentguard.testing.agentdojo_attacks`): steps that may be computed from the live
environment when they are due, and text the compromised agent adds to its answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Final

from agentguard.errors import AgentGuardError, MissingExtraError
from agentguard.testing.agentdojo_attacks import AttackPlan, AttackPlans, Step, attack_plans

try:
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.base_tasks import BaseInjectionTask, BaseUserTask
    from agentdojo.functions_runtime import EmptyEnv, FunctionCall, FunctionsRuntime
    from agentdojo.logging import Logger, TraceLogger
    from agentdojo.task_suite.task_suite import TaskSuite
    from agentdojo.types import ChatAssistantMessage, text_content_block_from_string
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("agentdojo", "agentdojo") from exc

_STATE: Final = "agentguard_scripted_agent"
"""The key of the run's script in the pipeline's ``extra_args`` (they travel with the run)."""


class NoScriptError(AgentGuardError, LookupError):
    """The scripted agent was given a prompt that is no task of its suite."""


@dataclass(frozen=True)
class _Script:
    """A run's plan and how far it got (kept in the pipeline's ``extra_args``)."""

    steps: tuple[Step, ...]
    answer: str
    cursor: int = 0
    calls: int = 0
    injected: range = field(default=range(0))
    """The positions in ``steps`` of the injection task's steps."""


class ScriptedAgent(BasePipelineElement):  # type: ignore[misc]  # agentdojo is untyped
    """Stands in for the LLM of an AgentDojo pipeline (see the module docstring)."""

    def __init__(
        self,
        suite: TaskSuite[Any],
        *,
        name: str = "scripted-local",
        attacks: AttackPlans | None = None,
    ) -> None:
        self.suite = suite
        self.name = name
        self.attacks = dict(attack_plans(suite.name) if attacks is None else attacks)
        self._task: tuple[BaseUserTask[Any], BaseInjectionTask[Any] | None] | None = None
        self.injected_calls: list[str] = []
        """The ids of the calls the last run asked for on the injection's behalf."""

    def set_task(
        self, user_task: BaseUserTask[Any], injection_task: BaseInjectionTask[Any] | None
    ) -> None:
        """Script the next runs for this pair (``None``: benign); without it the task is
        found from the prompt and the injection from AgentDojo's logger."""
        self._task = (user_task, injection_task)

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Any = EmptyEnv(),  # noqa: B008 - AgentDojo's own signature
        messages: Sequence[Any] = [],
        extra_args: dict[str, Any] = {},  # noqa: B006 - AgentDojo's own signature
    ) -> tuple[str, FunctionsRuntime, Any, Sequence[Any], dict[str, Any]]:
        script = extra_args.get(_STATE)
        if not isinstance(script, _Script):
            script = self._script(query, env)
            self.injected_calls = []
        while script.cursor < len(script.steps):
            at = script.cursor
            step = script.steps[at]
            script = replace(script, cursor=at + 1)
            call = step if isinstance(step, FunctionCall) else step(env)
            if call is None:
                continue
            asked = FunctionCall(
                function=call.function, args=dict(call.args), id=f"call_{script.calls}"
            )
            if at in script.injected:
                self.injected_calls.append(f"call_{script.calls}")
            script = replace(script, calls=script.calls + 1)
            message = ChatAssistantMessage(
                role="assistant", content=[text_content_block_from_string("")], tool_calls=[asked]
            )
            return query, runtime, env, [*messages, message], {**extra_args, _STATE: script}
        answer = ChatAssistantMessage(
            role="assistant",
            content=[text_content_block_from_string(script.answer)],
            tool_calls=None,
        )
        return query, runtime, env, [*messages, answer], {**extra_args, _STATE: script}

    def _script(self, query: str, env: Any) -> _Script:
        """The plan of the run that starts with ``query``."""
        user_task, injection_task = self._task if self._task is not None else self._find(query)
        calls: list[Step] = list(user_task.ground_truth(env))
        answer = str(getattr(user_task, "GROUND_TRUTH_OUTPUT", "") or "")
        if injection_task is None:
            return _Script(tuple(calls), answer)
        plan = self.attack_plan(injection_task, env)
        at = injection_point(self.suite, user_task) + 1
        steps = (*calls[:at], *plan.steps, *calls[at:])
        answer = f"{answer} {plan.answer}".strip() if plan.answer else answer
        return _Script(steps, answer, injected=range(at, at + len(plan.steps)))

    def attack_plan(self, injection_task: BaseInjectionTask[Any], env: Any) -> AttackPlan:
        """The injection task's ground truth, or its plan in ``attacks`` when that is
        empty."""
        calls = tuple(injection_task.ground_truth(env.model_copy(deep=True)))
        if calls or injection_task.ID not in self.attacks:
            return AttackPlan(calls)
        return self.attacks[injection_task.ID](env)

    def _find(self, query: str) -> tuple[BaseUserTask[Any], BaseInjectionTask[Any] | None]:
        for task in self.suite.user_tasks.values():
            if query == task.PROMPT:
                return task, _logged_injection(self.suite)
        for task in self.suite.injection_tasks.values():
            if query == task.GOAL:  # AgentDojo runs each injection task alone first
                return task, None
        raise NoScriptError(f"no task of suite {self.suite.name!r} has the prompt {query!r}")


def _logged_injection(suite: TaskSuite[Any]) -> BaseInjectionTask[Any] | None:
    """The injection task AgentDojo's ``TraceLogger`` is logging the run under, if any."""
    logger = Logger.get()
    if not isinstance(logger, TraceLogger):
        return None
    injection_id = logger.context.get("injection_task_id")
    if not injection_id or injection_id not in suite.injection_tasks:
        return None
    task: BaseInjectionTask[Any] = suite.get_injection_task_by_id(injection_id)
    return task


def injection_point(suite: TaskSuite[Any], user_task: BaseUserTask[Any]) -> int:
    """The index of the user task's first ground-truth call whose result carries an
    injection vector (found as AgentDojo's attacks find the vectors a task sees: the
    ground truth run on canary injections); the last call when none does."""
    return _injection_point(suite, user_task.ID)


@cache
def _injection_point(suite: TaskSuite[Any], user_task_id: str) -> int:
    user_task = suite.get_user_task_by_id(user_task_id)
    canaries = {v: f"<CANARY---{v}--->" for v in suite.get_injection_vector_defaults()}
    env = user_task.init_environment(suite.load_and_inject_default_environment(canaries))
    runtime = FunctionsRuntime(suite.tools)
    calls = user_task.ground_truth(env.model_copy(deep=True))
    for index, call in enumerate(calls):
        result, _ = runtime.run_function(env, call.function, call.args)
        text = tool_result_to_str(result)
        if any(canary in text for canary in canaries.values()):
            return index
    return len(calls) - 1


__all__ = ["AttackPlan", "AttackPlans", "NoScriptError", "ScriptedAgent", "Step", "injection_point"]
