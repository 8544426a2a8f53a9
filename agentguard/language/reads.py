"""What a formula reads of a call besides its name and arguments: its result.

Three stages ask the same question: the monitor (a call whose result is still unknown
cannot settle a constraint that reads it), the firewall (a completed call needs no new
step for a constraint that reads no result) and the report (a redacted log cannot judge
such a constraint). One conservative answer serves all three, so they cannot disagree.
"""

from __future__ import annotations

from typing import Any

from agentguard.language import ast as A

RESULT_PREDICATES = frozenset({"CalledWithResult", "Predicate"})
"""Trace predicates that read a call's result (``Predicate`` may read anything)."""


def reads_results(node: Any) -> bool:
    """Could the truth of ``node`` (a formula, term or test) depend on a call's result?

    Conservative: a registered domain extractor other than ``args``/``tools`` counts as
    reading results, since it may.
    """
    if isinstance(node, A.FieldRef):
        return node.is_result
    if isinstance(node, A.Domain):
        return node.extractor not in ("args", "tools")
    if isinstance(node, A.TracePredicate) and node.name in RESULT_PREDICATES:
        return True
    if isinstance(node, (tuple, list)):
        return any(reads_results(x) for x in node)
    if hasattr(node, "__dataclass_fields__"):
        return any(
            reads_results(getattr(node, n)) for n in node.__dataclass_fields__ if n != "span"
        )
    return False


__all__ = ["RESULT_PREDICATES", "reads_results"]
