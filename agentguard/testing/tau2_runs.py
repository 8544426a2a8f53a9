"""tau2 results files of scripted runs, built by the ``tau2`` package itself (extra ``[tau2]``).

For testing specs and PEC pipelines without a model service: a task's ground-truth
actions (optionally with corrupted arguments) are sent, as tool calls of tau2's own
message models, to the real domain environment (``Environment.get_response``, which
also writes each tool message's ``error`` flag); the reward is tau2's
``EnvironmentEvaluator`` (database check) and the file is
``Results.model_dump(mode="json")``: the shape ``tau2 run`` saves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Fault = Mapping[int, Mapping[str, Any]]
"""``{agent call index: replacement arguments}`` injected into a ground-truth run."""

Dialogue = Mapping[int, Sequence[tuple[str, str]]]
"""``{action index: [(role, text), ...]}``: messages exchanged before that action
(``len(actions)``: after the last one), ``role`` being ``"user"`` or ``"assistant"``."""


def tau2_simulation(
    domain: str,
    task_id: str,
    *,
    trial: int = 0,
    fault: Fault | None = None,
    dialogue: Dialogue | None = None,
    spoken: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """One ``SimulationRun`` of a task's ground truth, as a JSON-ready dict.

    ``fault`` replaces the arguments of the agent's calls at the given indices; the
    domain answers them as it would answer an agent (``"error": true`` when refused).
    ``dialogue`` adds the conversation around the actions (tau2's own message models);
    ``spoken`` gives an action's assistant message text beside its tool call (what the
    airline policy forbids: talking and calling tools at once).
    """
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import RewardInfo, SimulationRun
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    from agentguard.pec.tau2_env import fresh_environment, load_tasks

    def constructor(solo_mode: bool = False) -> Any:  # over cached copies of the shipped DBs
        del solo_mode
        return fresh_environment(domain)

    task = load_tasks(domain)[task_id]
    env = constructor()
    state = task.initial_state
    env.set_state(
        initialization_data=state.initialization_data if state else None,
        initialization_actions=state.initialization_actions if state else None,
        message_history=(state.message_history or []) if state else [],
    )
    messages: list[Any] = [
        AssistantMessage(role="assistant", content="Hi! How can I help you today?"),
        UserMessage(role="user", content="I need help with my account."),
    ]
    agent_index = 0
    actions = task.evaluation_criteria.actions if task.evaluation_criteria else None

    def say(n: int) -> None:
        for role, text in (dialogue or {}).get(n, ()):
            if role == "user":
                messages.append(UserMessage(role="user", content=text))
            else:
                messages.append(AssistantMessage(role="assistant", content=text))

    for n, action in enumerate(actions or []):
        say(n)
        args = dict(action.arguments)
        if action.requestor == "assistant":
            args = dict((fault or {}).get(agent_index, args))
            agent_index += 1
        call = ToolCall(
            id=f"call_{n}", name=action.name, arguments=args, requestor=action.requestor
        )
        if action.requestor == "user":
            messages.append(UserMessage(role="user", content=None, tool_calls=[call]))
        else:
            text = (spoken or {}).get(n)
            messages.append(AssistantMessage(role="assistant", content=text, tool_calls=[call]))
        messages.append(env.get_response(call))
    say(len(actions or []))
    messages.append(AssistantMessage(role="assistant", content="Is there anything else?"))
    messages.append(UserMessage(role="user", content="No, thanks. ###STOP###"))
    reward = EnvironmentEvaluator.calculate_reward(constructor, task, messages)
    run = SimulationRun(
        id=f"{domain}-{task_id}-{trial}",
        task_id=task_id,
        start_time="2026-12-01T09:00:00",
        end_time="2026-12-01T09:01:00",
        duration=60.0,
        termination_reason="user_stop",
        reward_info=RewardInfo(reward=reward.reward, db_check=reward.db_check),
        messages=messages,
        trial=trial,
    )
    out: dict[str, Any] = run.model_dump(mode="json")
    return out


def tau2_results(domain: str, simulations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A whole tau2 results file around some simulations (``Results.model_dump``)."""
    from tau2.data_model.simulation import AgentInfo, Info, Results, SimulationRun, UserInfo

    from agentguard.pec.tau2_env import fresh_environment, load_tasks

    env = fresh_environment(domain)
    info = Info(
        git_commit="0000000",
        num_trials=1 + max((s["trial"] or 0) for s in simulations),
        max_steps=100,
        max_errors=10,
        user_info=UserInfo(implementation="user_simulator", llm="gpt-4.1"),
        agent_info=AgentInfo(implementation="llm_agent", llm="gpt-4.1-mini"),
        environment_info=env.get_info(),
    )
    tasks = [load_tasks(domain)[s["task_id"]] for s in simulations]
    results = Results(
        info=info,
        tasks=tasks,
        simulations=[SimulationRun.model_validate(s) for s in simulations],
    )
    out: dict[str, Any] = results.model_dump(mode="json")
    return out


def write_json(path: Path, value: Any) -> Path:
    """Write ``value`` as indented JSON (how tau2 saves results)."""
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


__all__ = ["Fault", "tau2_results", "tau2_simulation", "write_json"]
