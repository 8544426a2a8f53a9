"""Score a Ray Dataset of traces with ``map_batches`` (the ``[ray]`` extra).

Each batch is scored by :func:`agentguard.verify_traces` on whichever node holds it; the
reports travel back pickled in one binary column, in the dataset's order, and the
aggregate table is computed from them on the driver. On a cluster, ``ray.init(address=
"auto")`` (or ``RAY_ADDRESS``) before the call is all it takes; see docs/scale.md.

Rows are traces in any shape ``verify_trace`` accepts. Arrow, which backs Ray Datasets,
unifies the fields of nested structs across rows (a missing ``tool_result`` becomes
``null``, one call's argument keys appear on every call), so for arbitrary JSON keep
each trace as JSON text in one column (``ray.data.read_text`` gives a ``text`` column)
and name it with ``column``.
"""

from __future__ import annotations

import importlib
import json
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentguard.errors import MissingExtraError, TraceRecordError
from agentguard.language.ast import Spec
from agentguard.scale.summary import CorpusSummary, summarize
from agentguard.scoring.batch import verify_traces
from agentguard.scoring.report import ComplianceReport

REPORT_COLUMN = "agentguard_report"


@dataclass(frozen=True, slots=True)
class DatasetScores:
    """Per-trace reports in the dataset's order, and the aggregate table."""

    reports: tuple[ComplianceReport, ...]
    summary: CorpusSummary


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise MissingExtraError("ray", "ray") from exc


def score_dataset(
    ds: Any,
    spec: Spec | str,
    *,
    column: str | None = None,
    batch_size: int = 512,
    plugins: Sequence[str] = (),
) -> DatasetScores:
    """Score every row of the Ray Dataset ``ds`` against ``spec`` (a spec, text or path).

    ``column`` names a column holding each trace (JSON text or a record); without it the
    whole row is the trace record. ``plugins`` are modules each worker imports first
    (those registering predicates or extractors the spec uses).
    """
    _ray()
    if isinstance(spec, str):
        from agentguard.scoring.verify import _spec_from

        spec = _spec_from(spec, None)
    scored = ds.map_batches(
        _score_batch,
        batch_size=batch_size,
        batch_format="pyarrow",
        fn_kwargs={"spec": spec, "column": column, "plugins": tuple(plugins)},
    )
    # reports must come back in row order; a Dataset executes with its own context
    options = scored.context.execution_options
    before = options.preserve_order
    options.preserve_order = True
    try:
        rows = scored.take_all()
    finally:
        options.preserve_order = before
    reports = tuple(pickle.loads(row[REPORT_COLUMN]) for row in rows)
    return DatasetScores(reports, summarize(reports))


def _score_batch(batch: Any, *, spec: Spec, column: str | None, plugins: tuple[str, ...]) -> Any:
    """One batch (a pyarrow Table) to a one-column table of pickled reports."""
    pa = importlib.import_module("pyarrow")  # untyped; installed with ray[data]
    for name in plugins:
        importlib.import_module(name)
    traces = [_trace_value(row, column, k) for k, row in enumerate(batch.to_pylist())]
    reports = verify_traces(traces, spec)
    return pa.table({REPORT_COLUMN: pa.array([pickle.dumps(r) for r in reports], pa.binary())})


def _trace_value(row: dict[str, Any], column: str | None, index: int) -> Any:
    if column is None:
        return row
    if column not in row:
        raise TraceRecordError(f"row {index} has no column {column!r}", source="<dataset>")
    value = row[column]
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise TraceRecordError(
                f"row {index}: column {column!r} is not JSON ({exc})", source="<dataset>"
            ) from None
    return value
