"""A local process pool for corpora too big for one core: ``check --jobs``, ``pec --jobs``.

Work is cut into contiguous chunks, each scored in a worker, and the results are put back
in input order, so a pooled run returns exactly what the serial run returns. Workers are
started with ``spawn`` (no inherited locks or threads); each one rebuilds its state
(imports ``--load`` plugin modules, reads the spec) once, in the pool's initializer.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from agentguard.language.ast import Spec
from agentguard.scoring.batch import verify_traces
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.scoring.report import ComplianceReport
from agentguard.trace.model import Trace

T = TypeVar("T")
R = TypeVar("R")

CHUNKS_PER_JOB = 4
"""Chunks per worker: enough to even out uneven chunks, few enough to keep pickling cheap."""


def map_chunks(
    fn: Callable[[list[T]], list[R]],
    items: Sequence[T],
    jobs: int,
    *,
    initializer: Callable[..., object] | None = None,
    initargs: tuple[Any, ...] = (),
) -> list[R]:
    """``fn(items)`` computed chunk by chunk on ``jobs`` processes, in input order.

    ``fn`` maps a chunk to one result per item and must be importable by name (a
    module-level function). ``jobs <= 1`` (or a single chunk) runs in this process.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    items = list(items)
    if jobs == 1 or len(items) <= 1:
        if initializer is not None:
            initializer(*initargs)
        return fn(items)
    chunks = _chunks(items, jobs * CHUNKS_PER_JOB)
    context = multiprocessing.get_context("spawn")
    workers = min(jobs, len(chunks))
    with ProcessPoolExecutor(workers, context, initializer, initargs) as pool:
        out: list[R] = []
        for part in pool.map(fn, chunks):
            out.extend(part)
    return out


def _chunks(items: list[T], count: int) -> list[list[T]]:
    size = max(1, -(-len(items) // count))
    return [items[i : i + size] for i in range(0, len(items), size)]


# ---------------------------------------------------------------- compliance scoring
_state: dict[str, Any] = {}


def _init_scoring(spec: SpecLike, plugins: Sequence[str]) -> None:
    """Worker initializer: import the plugin modules, then load (or adopt) the spec."""
    import importlib

    for name in plugins:
        importlib.import_module(name)
    _state["spec"] = coerce_spec(spec)  # the one rule: scoring/inputs.py


def _score_chunk(traces: list[Trace]) -> list[ComplianceReport]:
    return verify_traces(traces, _state["spec"])


def verify_traces_parallel(
    traces: Sequence[Trace],
    spec: Spec | str | os.PathLike[str],
    *,
    jobs: int,
    plugins: Sequence[str] = (),
) -> list[ComplianceReport]:
    """``verify_traces(traces, spec)`` on ``jobs`` processes, reports in input order.

    ``spec`` is a parsed spec or a ``.ltl`` path; with a path each worker loads it itself
    (after importing ``plugins``, the modules that register predicates and extractors),
    which is what a spec using registered predicates needs.
    """
    source: SpecLike = spec  # a Path stays a Path: each worker applies the same rule
    return map_chunks(
        _score_chunk, traces, jobs, initializer=_init_scoring, initargs=(source, tuple(plugins))
    )
