"""The environment protocol a replay runs calls against, and the default error detector."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from agentguard.trace.model import Call, decode_result

Execution = tuple[bool, Any]
"""``(accepted, result)`` of one executed call."""


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


_ERROR_PREFIXES = ("error", "exception", "traceback")
_SOFT_FAILURE_KEYS = ("success", "ok", "authenticated")


def is_error_result(result: Any) -> bool:
    """A result that reports failure instead of information.

    * text starting with ``Error``/``Exception``/``Traceback`` (BFCL's
      ``"Error during execution: ..."``),
    * an object with a truthy ``error`` key,
    * a soft failure: an object whose ``success``/``ok``/``authenticated`` or
      ``*_status`` key is ``false`` (BFCL's ``{"login_status": false}``).
    """
    value = decode_result(result)
    if isinstance(value, str):
        return value.strip().lower().startswith(_ERROR_PREFIXES)
    if isinstance(value, Mapping):
        if value.get("error"):
            return True
        return any(
            v is False and (k in _SOFT_FAILURE_KEYS or str(k).endswith("_status"))
            for k, v in value.items()
        )
    return False


__all__ = ["Environment", "Execution", "is_error_result"]
