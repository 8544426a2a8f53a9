"""The environment protocol a replay runs calls against, and the rules that read a result
as an error.

Two detectors, for two situations:

* :func:`is_error_result` sees only the result (the information stage of offline
  traces, where nothing else is known);
* an :data:`ErrorRule` also sees the call, so a read-only status query answering
  ``{"login_status": false}`` is information ("not logged in"), while
  ``login(...)`` answering the same is a refused transition
  (:func:`default_error_rule`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, runtime_checkable

from agentguard.trace.model import Call, decode_result

Execution = tuple[bool, Any]
"""``(accepted, result)`` of one executed call."""

ErrorRule = Callable[[Call, Any], bool]
"""``(call, result) -> the result reports a failure``: decides which returned results a
backend refused (exceptions are always refusals). Pass one to ``bfcl_oracle(error_rule=...)``."""


@runtime_checkable
class Environment(Protocol):
    """A benchmark backend: reset to a task's initial state, then execute calls in order.

    ``execute`` returns ``accepted = False`` when the backend refuses the transition
    in the current state (the call's state-consistency failure); the state advances
    only on accepted calls. ``close`` releases whatever ``reset`` set up.
    """

    def reset(self, task_id: str) -> None: ...

    def execute(self, call: Call) -> Execution: ...

    def close(self) -> None: ...


@runtime_checkable
class UserEnvironment(Environment, Protocol):
    """An environment where a simulated user also calls tools (tau2's telecom domain).

    The replay sends :attr:`Episode.user_calls <agentguard.pec.episode.Episode.user_calls>`
    here, in place; their verdict is ignored (they are not the agent's actions).
    """

    def execute_user(self, call: Call) -> Execution: ...


_ERROR_PREFIXES = ("error", "exception", "traceback")
_SOFT_FAILURE_KEYS = ("success", "ok", "authenticated")
QUERY_WORDS: Final = frozenset(
    {"get", "list", "check", "view", "show", "search", "find", "is", "has", "display"}
)
"""Words that make a tool name a read-only query (``ticket_get_login_status``, ``list_users``)."""


def is_error_result(result: Any, *, soft: bool = True) -> bool:
    """A result that reports failure instead of information.

    * text starting with ``Error``/``Exception``/``Traceback`` (BFCL's
      ``"Error during execution: ..."``),
    * an object with a truthy ``error`` key,
    * a list holding such an error (BFCL's ``['Error: User not authenticated...']`` and
      ``[{"error": ...}]``),
    * with ``soft`` (the default), a soft failure: an object whose
      ``success``/``ok``/``authenticated`` or ``*_status`` key is ``false``
      (BFCL's ``{"authentication_status": false}``).
    """
    value = decode_result(result)
    if isinstance(value, str):
        return value.strip().lower().startswith(_ERROR_PREFIXES)
    if isinstance(value, list):
        return any(is_error_result(item, soft=False) for item in value)
    if isinstance(value, Mapping):
        if value.get("error"):
            return True
        return soft and any(
            v is False and (k in _SOFT_FAILURE_KEYS or str(k).endswith("_status"))
            for k, v in value.items()
        )
    return False


def is_query(name: str) -> bool:
    """A read-only query by its name: one of :data:`QUERY_WORDS` is a ``_``-separated word."""
    return not QUERY_WORDS.isdisjoint(name.lower().split("_"))


def default_error_rule(call: Call, result: Any) -> bool:
    """Errors as :func:`is_error_result` reads them, but a query's ``false`` is an answer.

    ``ticket_get_login_status() -> {"login_status": false}`` reports a state, it does
    not refuse a transition; ``authenticate_twitter(...) -> {"authentication_status":
    false}`` does.
    """
    return is_error_result(result, soft=not is_query(call.name))


def strict_error_rule(call: Call, result: Any) -> bool:
    """Every soft failure is an error, queries included (the rule before issue 14)."""
    del call
    return is_error_result(result)


def raised_only_rule(call: Call, result: Any) -> bool:
    """Only raised exceptions are refusals: every returned result is information."""
    del call, result
    return False


ERROR_RULES: Final[Mapping[str, ErrorRule]] = {
    "default": default_error_rule,
    "strict": strict_error_rule,
    "raised": raised_only_rule,
}
"""The error rules by name (``agentguard pec --error-rule NAME``)."""


__all__ = [
    "ERROR_RULES",
    "QUERY_WORDS",
    "Environment",
    "ErrorRule",
    "Execution",
    "UserEnvironment",
    "default_error_rule",
    "is_error_result",
    "is_query",
    "raised_only_rule",
    "strict_error_rule",
]
