"""A spec compiled once for monitoring, shared by every monitor and firewall of it.

Compiling builds each constraint's machine (the lazily explored automaton); a monitor
only holds one run's states over them. So a spec is compiled once per process and
matcher: :func:`compile_spec` caches by the constraints' identity (no hashing on the hot
path: a new ``Firewall`` of the same ``Spec`` object reuses it) and then by their content
hash (a spec loaded again from the same file, a restore in a new firewall). The compiled
machines are shared across threads; their memo tables grow under each machine's lock
(see :mod:`agentguard.monitor.stepping`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypeVar

from agentguard.language import ast as A
from agentguard.monitor import machine
from agentguard.monitor.compile import compile_plan
from agentguard.monitor.plans import Plan, plan_machines
from agentguard.semantics.predicates import values_match
from agentguard.semantics.provenance import ProvenancePlan, lower_spec
from agentguard.semantics.registry import Matcher, Registry, default_registry

_K = TypeVar("_K")
_V = TypeVar("_V")

CACHE_SIZE: Final = 64
"""Compiled specs kept per process (least recently used ones are dropped)."""


@dataclass(frozen=True, eq=False)
class CompiledSpec:
    """Every constraint's monitoring plan, built once; pass it to :class:`Monitor`."""

    constraints: tuple[A.Constraint, ...]
    plans: Mapping[str, Plan]
    fingerprint: str
    match: Matcher
    provenance: ProvenancePlan | None = None
    """The ``from`` tests (lowered in ``constraints``) and result formats: a monitor
    keeps a :class:`~agentguard.semantics.provenance_index.ProvenanceState` of them."""


def spec_fingerprint(constraints: Sequence[A.Constraint]) -> str:
    """A content hash of the constraints (names and formulas), stable across processes."""
    text = "\n".join(f"{c.name}:{c.formula!r}" for c in constraints)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_lock = threading.RLock()
_by_identity: OrderedDict[tuple[int, Matcher], tuple[object, CompiledSpec]] = OrderedDict()
_by_content: OrderedDict[tuple[str, Matcher], CompiledSpec] = OrderedDict()


def compile_spec(
    spec: A.Spec | Sequence[A.Constraint],
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
) -> CompiledSpec:
    """The compiled monitor of ``spec`` (cached: the same object for the same spec)."""
    # `from` tests become tests on facts each call's view carries (semantics/provenance.py)
    lowered, provenance = lower_spec(spec)
    constraints = lowered.constraints if isinstance(lowered, A.Spec) else lowered
    if not isinstance(spec, A.Spec) and provenance is None:
        constraints = spec if isinstance(spec, tuple) else tuple(spec)
    matcher: Matcher = match or (registry or default_registry).matcher or values_match
    key = (id(constraints), matcher)
    with _lock:
        hit = _by_identity.get(key)
        if hit is not None and hit[0] is constraints:
            _by_identity.move_to_end(key)
            return hit[1]
        fingerprint = spec_fingerprint(constraints)
        if provenance is not None:  # trust declarations and formats change the meaning
            extra = f"{fingerprint}\n{provenance!r}".encode()
            fingerprint = hashlib.sha256(extra).hexdigest()[:16]
        compiled = _by_content.get((fingerprint, matcher))
        if compiled is None:
            plans = {c.name: compile_plan(c.formula, matcher) for c in constraints}
            pool = machine.StatePool(machine.MAX_SPEC_EXPLORE)  # one budget for the whole spec
            for plan in plans.values():
                for m in plan_machines(plan):
                    m.pool = pool
            compiled = CompiledSpec(
                constraints, MappingProxyType(plans), fingerprint, matcher, provenance
            )
            _remember(_by_content, (fingerprint, matcher), compiled)
        else:
            _by_content.move_to_end((fingerprint, matcher))
        # the entry keeps ``constraints`` alive, so its id cannot be reused meanwhile
        _remember(_by_identity, key, (constraints, compiled))
        return compiled


def _remember(cache: OrderedDict[_K, _V], key: _K, value: _V) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def clear_cache() -> None:
    """Forget every compiled spec (benchmarks measuring a cold build; tests)."""
    global _generation
    with _lock:
        _by_identity.clear()
        _by_content.clear()
        _generation += 1


_generation = 0


def cache_generation() -> int:
    """How many times :func:`clear_cache` ran: caches keeping compiled specs by content
    elsewhere (the firewall prototypes', ``enforcement/prototype.py``) key on it, so that
    a cleared cache means a fresh compile for a new spec object there too."""
    return _generation
