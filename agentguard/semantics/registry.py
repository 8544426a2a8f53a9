"""User extension points: open predicates, domain extractors and the result matcher.

Extension points are plain callables (documented type aliases), not base classes:

* :data:`PredicateFn` ``(*values) -> bool`` — a user predicate such as ``is_even(x)``,
  applied to term values at the current position.
* :data:`ContextPredicateFn` ``(trace, i, metrics) -> bool`` — the paper's open predicate
  ``f(τ, i, μ)``, used as ``Predicate(f)``.
* :data:`ExtractorFn` ``(trace, tool, path, *extra) -> Iterable`` — a domain extractor
  ``D(τ, μ)``, used as ``forall x in name(tool.path): ...``.
* :data:`Matcher` ``(result, expected) -> bool`` — the ``match`` comparator of
  ``CalledWithResult``; the default is structural equality.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from agentguard.language.vocabulary import BUILTIN_EXTRACTORS as BUILTIN_EXTRACTORS
from agentguard.language.vocabulary import set_default_vocabulary
from agentguard.semantics import builtins

if TYPE_CHECKING:
    from agentguard.trace.model import Trace

PredicateFn: TypeAlias = Callable[..., bool]
ContextPredicateFn: TypeAlias = Callable[["Trace", int, Mapping[str, Any]], bool]
ExtractorFn: TypeAlias = Callable[..., Iterable[Any]]
Matcher: TypeAlias = Callable[[Any, Any], bool]


@dataclass(slots=True)
class Registry:
    """Named user predicates, context predicates, extractors and the result matcher."""

    predicates: dict[str, tuple[PredicateFn, int | None]] = field(default_factory=dict)
    context_predicates: dict[str, ContextPredicateFn] = field(default_factory=dict)
    extractors: dict[str, ExtractorFn] = field(default_factory=dict)
    matcher: Matcher | None = None
    builtins: bool = True  # install the built-in grounding domains and predicate

    def __post_init__(self) -> None:
        if self.builtins:
            for name, fn in builtins.EXTRACTORS.items():
                self.extractors.setdefault(name, fn)
            for name, cfn in builtins.CONTEXT_PREDICATES.items():
                self.context_predicates.setdefault(name, cfn)

    def register_predicate(self, name: str, fn: PredicateFn, *, arity: int | None = None) -> None:
        """Register ``name(args...)``; ``arity`` None means any number of arguments."""
        self.predicates[name] = (fn, arity)

    def register_context_predicate(self, name: str, fn: ContextPredicateFn) -> None:
        """Register ``f(trace, i, metrics)`` for use as ``Predicate(name)``."""
        self.context_predicates[name] = fn

    def register_extractor(self, name: str, fn: ExtractorFn) -> None:
        """Register a domain extractor ``name(tool.path, ...)``."""
        self.extractors[name] = fn

    def set_matcher(self, fn: Matcher | None) -> None:
        self.matcher = fn

    def child(self) -> Registry:
        """A copy that can be extended without touching this one."""
        return Registry(
            dict(self.predicates),
            dict(self.context_predicates),
            dict(self.extractors),
            self.matcher,
        )


default_registry = Registry()
"""The process-wide registry used when none is passed (built-ins already installed)."""
set_default_vocabulary(lambda: default_registry)  # what a spec parsed without one resolves


def register_predicate(name: str, fn: PredicateFn, *, arity: int | None = None) -> None:
    """Register a user predicate in the default registry."""
    default_registry.register_predicate(name, fn, arity=arity)


def register_context_predicate(name: str, fn: ContextPredicateFn) -> None:
    """Register a ``Predicate(name)`` function ``f(trace, i, metrics)`` in the default registry."""
    default_registry.register_context_predicate(name, fn)


def register_extractor(name: str, fn: ExtractorFn) -> None:
    """Register a domain extractor in the default registry."""
    default_registry.register_extractor(name, fn)


def predicate(
    name: str | None = None, *, arity: int | None = None
) -> Callable[[PredicateFn], PredicateFn]:
    """Decorator form of :func:`register_predicate`."""

    def wrap(fn: PredicateFn) -> PredicateFn:
        register_predicate(name or fn.__name__, fn, arity=arity)
        return fn

    return wrap


def register_grounding(registry: Registry | None = None) -> None:
    """Make trace grounding available to specs: ``Predicate(grounded)``, ``entities(...)``,
    ``ungrounded(...)``, ``outputs``. Every ``Registry()`` has them already; this is for one
    built with ``builtins=False``. ``registry`` defaults to the process-wide one."""
    target = default_registry if registry is None else registry
    for name, fn in builtins.EXTRACTORS.items():
        target.register_extractor(name, fn)
    for name, cfn in builtins.CONTEXT_PREDICATES.items():
        target.register_context_predicate(name, cfn)
