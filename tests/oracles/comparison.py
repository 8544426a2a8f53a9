"""What the oracle comparisons share: their seeded plans as pytest params, the engine a
named case can be checked on, and the report of disagreements (smallest first).

``holds`` (offline) and the monitor (online) are compared with the same oracles in the
same way; only what they answer differs (a truth value, a prefix verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from .formulas import Formula, Fragment, is_future, size, to_agentguard
from .ltlf_oracle import Engine, engine_available
from .marks import engine_for, needs

#: (fragment, engine, seed, formulas, traces per formula)
Plan = tuple[tuple[Fragment, Engine, int, int, int], ...]

#: formula, trace (or its shortest wrong prefix), ours, the oracle's
Disagreement = tuple[Formula, tuple[str, ...], Any, Any]


def plan_params(plan: Plan) -> list[Any]:
    """One pytest param per row of ``plan``, skipped without its engine, named by fragment."""
    return [pytest.param(*row, marks=needs(row[1]), id=row[0].name) for row in plan]


def engine_if_available(formula: Formula) -> Engine | None:
    """The engine that can check ``formula`` on this machine, or None (a named case then
    checks agentguard's answer alone)."""
    engine = engine_for(is_future(formula))
    return engine if engine_available(engine) else None


def report(disagreements: Sequence[Disagreement], ours: str) -> str:
    """The ten smallest disagreements as ``formula | trace | OURS=... | oracle=...`` lines."""
    ranked = sorted(disagreements, key=lambda d: (size(d[0]), len(d[1])))
    lines = [
        f"{to_agentguard(f)} | {list(w)} | {ours}={mine} | oracle={theirs}"
        for f, w, mine, theirs in ranked[:10]
    ]
    return f"{len(disagreements)} disagreements, smallest first:\n" + "\n".join(lines)
