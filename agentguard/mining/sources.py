"""What ``mine`` reads: trace files in any format ``check`` reads, or traces in memory.

Dialogue events are kept (a spec that names ``user_message`` sees them; one that does
not is judged on the tool calls alone, docs/traces.md), since provenance needs them.
A record that cannot be read stops the mining with the record named: a spec proposed
from a silently partial log would claim to hold on runs nobody looked at.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentguard.errors import TraceError
from agentguard.mining.errors import MiningError
from agentguard.scoring.inputs import coerce_trace
from agentguard.trace.loaded import LoadedTrace
from agentguard.trace.loaders import iter_trace_file
from agentguard.trace.model import Trace

MAX_LISTED = 5
"""How many unreadable records an error lists before saying how many more there are."""


def read(
    items: Iterable[Any], *, format: str | None = None, final_answer: bool = True
) -> list[Trace]:
    """Traces from paths (``str`` / ``os.PathLike``: files to load) and trace values."""
    out: list[Trace] = []
    bad: list[str] = []
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            path = Path(item)
            try:
                records = list(
                    iter_trace_file(path, format=format, final_answer=final_answer, messages=True)
                )
            except TraceError as exc:
                bad.append(str(exc))
                continue
            if not records:
                bad.append(f"{path}: no trace records in the file")
            for rec in records:
                if rec.trace is None:
                    bad.append(str(rec.error))
                else:
                    out.append(rec.trace)
        elif isinstance(item, LoadedTrace):
            if item.trace is None:
                bad.append(str(item.error))
            else:
                out.append(item.trace)
        else:
            out.append(coerce_trace(item))
    if bad:
        more = f" (and {len(bad) - MAX_LISTED} more)" if len(bad) > MAX_LISTED else ""
        raise MiningError(
            "cannot mine: unreadable trace record(s): " + "; ".join(bad[:MAX_LISTED]) + more
        )
    return out
