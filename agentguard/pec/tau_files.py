"""tau-bench and tau2 result files read as episodes, one per run, with no conversion step.

* tau-bench: a JSON list of ``{"task_id", "reward", "info", "traj", "trial"}``;
* tau2: a results object ``{"info", "tasks", "simulations": [...]}`` whose simulations
  carry ``task_id``, ``trial``, ``messages`` and ``reward_info``.

Calls come from the trace formats (:mod:`agentguard.trace.formats.tau_bench`,
:mod:`agentguard.trace.formats.tau2`); success is ``reward == 1``. Labels:
``dataset`` (``tau-bench`` or ``tau2-<domain>``), ``trial``, and for tau2 ``domain``,
``model`` (the agent's LLM) and ``method`` (the agent implementation).

PEC choice for the simulated user's tool calls (tau2 telecom): they are kept as
:attr:`Episode.user_calls <agentguard.pec.episode.Episode.user_calls>`, replayed in
place by an environment oracle so the state is the one the agent acted in, but they
are not the agent's actions: they do not count toward ``T`` and are never judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentguard.errors import TraceRecordError
from agentguard.pec.episode import Episode, LoadedEpisode
from agentguard.trace.formats import parse
from agentguard.trace.formats import tau_bench as tau_bench_format
from agentguard.trace.formats.tau2 import USER_TOOL_CALLS
from agentguard.trace.model import Call

_SUCCESS_TOLERANCE = 1e-6


def tau_items(value: Any) -> tuple[str, list[Any], dict[str, str]] | None:
    """``(format, runs, labels)`` when ``value`` is a whole tau-bench or tau2 results file."""
    if isinstance(value, Mapping) and isinstance(value.get("simulations"), list):
        return "tau2", list(value["simulations"]), _tau2_labels(value.get("info"))
    if isinstance(value, list) and value and all(tau_bench_format.detect(v) for v in value):
        return "tau-bench", list(value), {"dataset": "tau-bench"}
    return None


def _tau2_labels(info: Any) -> dict[str, str]:
    labels: dict[str, str] = {}
    if not isinstance(info, Mapping):
        return {"dataset": "tau2"}
    env = info.get("environment_info")
    domain = env.get("domain_name") if isinstance(env, Mapping) else None
    labels["dataset"] = f"tau2-{domain}" if domain else "tau2"
    if domain:
        labels["domain"] = str(domain)
    agent = info.get("agent_info")
    if isinstance(agent, Mapping):
        if agent.get("llm"):
            labels["model"] = str(agent["llm"])
        if agent.get("implementation"):
            labels["method"] = str(agent["implementation"])
    return labels


def iter_tau_episodes(
    fmt: str, runs: list[Any], labels: Mapping[str, str], source: str
) -> Iterator[LoadedEpisode]:
    """One loaded episode (or error) per run, numbered from 1."""
    for record, run in enumerate(runs, start=1):
        try:
            episode = tau_episode(run, fmt, labels, source)
        except TraceRecordError as exc:
            err = TraceRecordError(exc.message, source=source, record=record)
            yield LoadedEpisode(source, record, None, None, err)
            continue
        yield LoadedEpisode(source, record, episode, None, None)


def tau_episode(run: Any, fmt: str, labels: Mapping[str, str], source: str) -> Episode:
    """One run as an episode: the agent's calls judged, the user's replayed only."""
    if isinstance(run, Mapping) and run.get("skipped") is True:
        raise TraceRecordError("tau2 skipped this simulation (it failed to run)", source=source)
    trace, _ = parse(run, source=source, format=fmt, final_answer=False)
    reward = trace.metrics.get("reward")
    if not isinstance(reward, (int, float)) or isinstance(reward, bool):
        raise TraceRecordError(
            "no reward recorded (tau2 'reward_info.reward' / tau-bench 'reward'): "
            "the run was not evaluated",
            source=source,
        )
    users = set(trace.metrics.get(USER_TOOL_CALLS, ()))
    calls: list[Call] = []
    user_calls: list[tuple[int, Call]] = []
    for call in trace.calls:
        if call.position in users:
            user_calls.append((len(calls), call))
        else:
            calls.append(call)
    out = dict(labels)
    trial = trace.metrics.get("trial")
    if trial is not None:
        out["trial"] = str(trial)
    task_id = trace.metrics["task_id"]
    success = abs(float(reward) - 1.0) < _SUCCESS_TOLERANCE
    return Episode(str(task_id), tuple(calls), success, out, None, False, tuple(user_calls))


__all__ = ["iter_tau_episodes", "tau_episode", "tau_items"]
