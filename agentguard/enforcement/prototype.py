"""What every ``Firewall`` of one spec derives from the spec alone, built once per process.

A firewall is built per agent run (per LangChain invocation, per MCP request), and most of
its construction used to depend only on the spec and the options that change how it is
compiled: the monitor's start nodes, indexes and router, the tool checker's declarations
and precondition evaluators, the spec hash, the dialogue and result-sensitivity scans.
:func:`firewall_prototype` builds them once into a frozen :class:`FirewallPrototype`;
each firewall then owns only its run's mutable state (monitor nodes cloned from the
prototype's templates, fresh checker indexes, its own dicts, locks and log).

The cache is keyed by the identity of the spec and of the registry (a ``Spec`` is a
frozen, deeply immutable AST; each entry holds both, so an id cannot be reused while
the entry lives), the final tools and ``enforce_tools`` (the options that change what
is built) and the registry's matcher (settable, and the compiled spec depends on it); it keeps the :data:`CACHE_SIZE` most recently used prototypes, so a process
that builds many specs keeps a bounded number.

A spec object seen for the first time, parsed from text, is looked up once more by its
*content*: the spec itself compared by value (the AST's own equality: spans never
compared, constants by value and JSON type, so ``true``, ``1`` and ``1.0`` differ), with
its text and source name, the same registry, options and matcher: the same file loaded
again, spec text parsed anew per run, an agent built per request from a freshly loaded
spec. Such a hit shares what the content alone determines (the hash, the scans, the
tool plan, the monitor prototype: the monitor's compiled spec is already shared by
content, ``monitor/compiled.py``) and takes the constraints from the new spec itself,
so a firewall never holds another spec's nodes as its own constraints. A spec built in
Python (no text) is found by identity only. Clearing the compiled specs' cache
(``monitor.compiled.clear_cache``) starts a new generation of the content entries, so a
cleared cache means a fresh compile for a new spec object here too.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final

from agentguard._identity_cache import IdentityCache
from agentguard._recursion import allow_deep
from agentguard.enforcement.agent_tools import spec_tool_names
from agentguard.enforcement.sensitivity import has_user_predicate, result_sensitive
from agentguard.language import ast as A
from agentguard.language import printer
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.monitor.compiled import cache_generation, compile_spec
from agentguard.monitor.prototype import MonitorPrototype, prototype
from agentguard.semantics.registry import Registry, default_registry
from agentguard.tools.checker import ToolPlan
from agentguard.trace.model import DIALOGUE_NAMES

CACHE_SIZE: Final = 64
"""Firewall prototypes kept per process (least recently used ones are dropped)."""


def spec_hash(spec: A.Spec) -> str:
    """The hash of what the spec *means*: of its canonical text (the printer's, macros
    expanded, imports inlined), so a comment, blank lines or layout do not change it
    while any change to a constraint, a severity, a weight or a declaration does. A
    saved state or a checkpoint is tied to a spec by it (restore, LangGraph's spec
    change), and an edited comment must neither lift a stop nor refuse a state."""
    text = printer.spec(spec)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def text_hash(spec: A.Spec) -> str:
    """The hash states and logs carried before :func:`spec_hash` hashed the meaning (of
    the spec's text, or its constraints when built in Python): still accepted on
    restore, so an older saved state continues."""
    text = spec.text or "\n".join(f"{c.name}:{c.formula!r}:{c.severity}" for c in spec.constraints)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def spec_hashes(spec: A.Spec) -> frozenset[str]:
    """Every hash a state of this spec may carry: its meaning's and its older text one."""
    return frozenset((spec_hash(spec), text_hash(spec)))


@dataclass(frozen=True, eq=False)
class FirewallPrototype:
    """The spec-only part of a firewall (see the module): shared, never mutated."""

    spec: A.Spec
    registry: Registry | None
    final_tools: tuple[str, ...]
    enforce_tools: bool
    spec_hash: str
    spec_hashes: frozenset[str]  # spec_hash and the older text hash (restore accepts both)
    judges_dialogue: bool  # the spec names a dialogue event: messages enter the trace
    constraints: MappingProxyType[str, A.Constraint]
    order: MappingProxyType[str, int]  # constraint name -> its place in the spec
    tools: ToolPlan
    reads_history: bool  # a tool precondition reads the executed calls
    result_sensitive: frozenset[str]  # constraints a result (or a predicate) may decide
    predicate_driven: frozenset[str]  # those with a user predicate
    monitor: MonitorPrototype
    tool_names: tuple[str, ...]  # the tools the spec declares or names (agent_tools.py)
    content: object  # a token shared by the prototypes of equal specs (see the module)


@allow_deep
def _make(
    spec: A.Spec,
    registry: Registry | None,
    final_tools: tuple[str, ...],
    enforce_tools: bool,
) -> FirewallPrototype:
    constraints = {c.name: c for c in spec.constraints}
    tools = ToolPlan.build(
        spec.tools if enforce_tools else (), implicit=final_tools, registry=registry
    )
    sensitive = frozenset(c.name for c in spec.constraints if result_sensitive(c.formula))
    chosen = registry or default_registry
    return FirewallPrototype(
        spec=spec,
        registry=registry,
        final_tools=final_tools,
        enforce_tools=enforce_tools,
        spec_hash=spec_hash(spec),
        spec_hashes=spec_hashes(spec),
        judges_dialogue=spec_mentions_dialogue(spec),
        constraints=MappingProxyType(constraints),
        order=MappingProxyType({c.name: i for i, c in enumerate(spec.constraints)}),
        tools=tools,
        reads_history=any(d.requires is not None for d in tools.tools.values()),
        result_sensitive=sensitive,
        predicate_driven=frozenset(
            n for n in sensitive if has_user_predicate(constraints[n].formula)
        ),
        monitor=prototype(
            compile_spec(spec, registry=chosen),
            chosen,
            frozenset(final_tools) | DIALOGUE_NAMES,
        ),
        tool_names=tuple(spec_tool_names(spec)),
        content=object(),
    )


@allow_deep  # a hit compares the trees
def _by_content(
    spec: A.Spec,
    registry: Registry | None,
    final_tools: tuple[str, ...],
    enforce_tools: bool,
    matcher: object,
) -> FirewallPrototype:
    """The prototype of an equal spec seen before, rebound to ``spec``'s own constraints;
    else a new one, kept by content too (in place of an unequal one of the same text).

    Entries are found by the text, source and options (a string hash, no walk of the
    tree), then the trees are compared once: a hit costs one comparison by value."""
    if not spec.text:  # built in Python: found by identity only
        return _make(spec, registry, final_tools, enforce_tools)
    # a cleared compile cache (cache_generation): compiled anew
    generation = cache_generation()
    key = (spec.text, spec.source, id(registry), final_tools, enforce_tools, matcher, generation)
    found = _by_content_cache.get(key)
    if found is None or not _equal(found, spec, registry):
        made = _make(spec, registry, final_tools, enforce_tools)
        with _content_lock:
            found = _by_content_cache.get(key)
            if found is None or not _equal(found, spec, registry):
                found = made  # else another thread made it meanwhile: one value per key
                _by_content_cache[key] = made
            _by_content_cache.move_to_end(key)
            while len(_by_content_cache) > CACHE_SIZE:
                _by_content_cache.popitem(last=False)
    else:
        with _content_lock:
            if key in _by_content_cache:  # not dropped meanwhile by another thread
                _by_content_cache.move_to_end(key)
    if found.spec is spec:
        return found
    return replace(
        found,
        spec=spec,
        constraints=MappingProxyType({c.name: c for c in spec.constraints}),
    )


def _equal(found: FirewallPrototype, spec: A.Spec, registry: Registry | None) -> bool:
    """Was ``found`` built for a spec equal to ``spec`` (by value) and this very registry?
    (It holds both, so the registry's id in the key cannot have been reused.)"""
    return found.registry is registry and (found.spec is spec or found.spec == spec)


_cache: IdentityCache[FirewallPrototype] = IdentityCache(CACHE_SIZE)
_by_content_cache: OrderedDict[tuple[object, ...], FirewallPrototype] = OrderedDict()
_content_lock = threading.Lock()


def firewall_prototype(
    spec: A.Spec,
    registry: Registry | None,
    final_tools: tuple[str, ...],
    enforce_tools: bool,
) -> FirewallPrototype:
    """The prototype of firewalls of ``spec`` with these options (cached, see the module)."""
    matcher = (registry or default_registry).matcher  # settable: compiled specs depend on it
    key = (id(spec), id(registry), final_tools, enforce_tools, matcher)
    return _cache.get(
        key,
        spec,
        registry,
        lambda: _by_content(spec, registry, final_tools, enforce_tools, matcher),
    )


def clear_cache() -> None:
    """Forget every firewall prototype (tests; benchmarks measuring a cold build)."""
    _cache.clear()
    with _content_lock:
        _by_content_cache.clear()


__all__ = [
    "CACHE_SIZE",
    "FirewallPrototype",
    "clear_cache",
    "firewall_prototype",
    "spec_hash",
    "spec_hashes",
    "text_hash",
]
