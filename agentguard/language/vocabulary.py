"""Which user names a spec may use: the resolver's view of the semantics registry.

The resolver must know which predicate, context-predicate and extractor names exist (and
predicate arities) to classify a name, but not what they do. :class:`Vocabulary` is that
read-only view; :class:`agentguard.semantics.Registry` satisfies it structurally, so the
language layer never imports the semantics layer. The semantics layer installs its
process-wide registry as the default (:func:`set_default_vocabulary`) when it is imported;
until then a spec sees only :data:`BUILTIN_EXTRACTORS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

BUILTIN_EXTRACTORS = ("args", "results", "tools")
"""Extractors every spec can use: argument values, result values, tool names called."""


class Vocabulary(Protocol):
    """Registered names: ``predicates`` maps a name to ``(function, arity or None)``."""

    @property
    def predicates(self) -> Mapping[str, tuple[object, int | None]]: ...

    @property
    def context_predicates(self) -> Mapping[str, object]: ...

    @property
    def extractors(self) -> Mapping[str, object]: ...


@dataclass(frozen=True, slots=True)
class Names:
    """A plain vocabulary (names only), for callers without a registry."""

    predicates: Mapping[str, tuple[object, int | None]] = field(default_factory=dict)
    context_predicates: Mapping[str, object] = field(default_factory=dict)
    extractors: Mapping[str, object] = field(default_factory=dict)


_NO_NAMES = Names()
_default: Callable[[], Vocabulary] = lambda: _NO_NAMES  # noqa: E731 - a replaceable slot


def set_default_vocabulary(provider: Callable[[], Vocabulary]) -> None:
    """Use ``provider()`` when a parse is given no vocabulary (the semantics layer calls this)."""
    global _default
    _default = provider


def default_vocabulary() -> Vocabulary:
    """The vocabulary a parse without an explicit one resolves names against."""
    return _default()
