"""The guard's ``wrap_*`` hooks as ``create_agent`` calls them: with their signature
computed once (see :class:`_PresignedHook`), a cost of LangChain's tracing wrapper that
would otherwise be paid on every model and tool call."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any


class _PresignedHook:
    """A ``wrap_*`` hook whose instances hand out their hook with its signature attached.

    ``create_agent`` wraps every middleware ``wrap_*`` hook (``middleware.wrap_model_call``)
    in LangSmith's ``traceable``, which asks ``inspect.signature`` for it on every call,
    tracing enabled or not. For a bound method inspect works out the function's signature
    and then builds a new one without ``self``, each time: more than most of the guard's
    own step. Read from an instance, this descriptor gives ``partial(function, instance)``
    carrying that bound signature, computed once (``inspect.signature`` returns a
    callable's ``__signature__`` at once); calling it calls the same function with the same
    arguments. Read from the class it is the function itself (which carries its own
    signature too), so ``create_agent``'s test of which hooks a middleware overrides, and
    ``copy``/``pickle`` of the instance (which holds nothing of it), are unchanged.
    """

    __slots__ = ("bound_signature", "function")

    def __init__(self, function: Callable[..., Any]) -> None:
        signature = inspect.signature(function)
        function.__signature__ = signature  # type: ignore[attr-defined]
        self.function = function
        self.bound_signature = signature.replace(parameters=list(signature.parameters.values())[1:])

    def __get__(self, instance: object, owner: type | None = None) -> Callable[..., Any]:
        if instance is None:
            return self.function
        hook = functools.partial(self.function, instance)
        hook.__signature__ = self.bound_signature  # type: ignore[attr-defined]
        return hook


def presign_hooks(cls: type) -> None:
    """Make each ``wrap_*`` hook ``cls`` defines a :class:`_PresignedHook` (see there)."""
    for name in ("wrap_model_call", "awrap_model_call", "wrap_tool_call", "awrap_tool_call"):
        hook = cls.__dict__.get(name)
        if hook is not None and not isinstance(hook, _PresignedHook):
            setattr(cls, name, _PresignedHook(hook))


__all__ = ["presign_hooks"]
