"""Built-in extension points every spec can use without registering anything.

Trace grounding (AgentLTL Section 4.4, Appendix H.3) is exposed to specs as

* ``entities(final_answer.answer)``: the referential entities an answer cites;
* ``outputs``: everything the trace's tool results showed, as a domain whose membership
  follows the grounding matching rules (exact paths and signatures, identifier prefixes);
* ``ungrounded(final_answer.answer)``: the cited entities nothing grounds;
* ``Predicate(grounded)``: the grounding predicate over the whole trace.

so that ``forall e in entities(final_answer.answer): e in outputs`` is the paper's
``∀e ∈ ent(a). e ∈ out(τ)``. The grounding itself lives in
:mod:`agentguard.semantics.grounding`; :class:`~agentguard.semantics.registry.Registry` installs
these tables (this module does not import the registry, so the two never loop).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

from agentguard.semantics.entities import Entity, extract_entities
from agentguard.semantics.grounding import (
    entities_extractor,
    grounded_context_predicate,
    seen_entities,
    ungrounded_extractor,
)
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Trace


class SeenOutputs:
    """``out(τ)`` as a container: ``e in outputs`` applies the grounding match rules."""

    __slots__ = ("_seen",)

    def __init__(self, trace: Trace) -> None:
        self._seen = seen_entities(trace)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str) or not item:
            return False
        found = extract_entities(item)
        kinds = [e.kind for e in found if e.text == item] or [
            "file_path",
            "function_signature",
            "identifier",
        ]
        return any(self._seen.grounds(Entity(kind, item)) for kind in kinds)

    def __iter__(self) -> Iterator[str]:
        yield from sorted(self._seen.paths | self._seen.signatures | self._seen.identifiers)

    def __len__(self) -> int:
        return len(self._seen.paths | self._seen.signatures | self._seen.identifiers)


def _outputs(trace: Trace, tool: str | None = None, path: Any = (), *extra: Any) -> SeenOutputs:
    del tool, path, extra
    return SeenOutputs(trace)


def _entities(
    trace: Trace, tool: str | None = FINAL_TOOL, path: Any = ("answer",), *extra: Any
) -> list[str]:
    return entities_extractor(trace, tool or FINAL_TOOL, path or ("answer",), *extra)


def _ungrounded(
    trace: Trace, tool: str | None = FINAL_TOOL, path: Any = ("answer",), *extra: Any
) -> list[str]:
    return ungrounded_extractor(trace, tool or FINAL_TOOL, path or ("answer",), *extra)


def _grounded(trace: Trace, position: int, metrics: Mapping[str, Any]) -> bool:
    return grounded_context_predicate(trace, position, metrics)


EXTRACTORS: Final[Mapping[str, Callable[..., Iterable[Any]]]] = {
    "entities": _entities,
    "outputs": _outputs,
    "ungrounded": _ungrounded,
}
"""The built-in domain extractors, by the name a spec uses."""

CONTEXT_PREDICATES: Final[Mapping[str, Callable[[Trace, int, Mapping[str, Any]], bool]]] = {
    "grounded": _grounded,
}
"""The built-in context predicates, by the name ``Predicate(name)`` uses."""
