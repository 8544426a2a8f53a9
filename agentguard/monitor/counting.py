"""``CalledN(tool, n, op)`` with a count too large to unroll: a counter, not a trace.

The compiler unrolls a count into nested occurrences up to ``MAX_COUNT``; a larger one
(``CalledN(search, 1000000000, <=)``, a budget) used to fall back to keeping the whole
trace and evaluating it at the end, so a long run grew without bound and the verdict
came only at the end. The count of a tool only grows, so one integer decides it online
as soon as any continuation would agree: ``<= n`` is violated once the count passes
``n``, ``>= n`` satisfied once it reaches ``n``. The counter and ``finish`` give the
offline evaluator's truth (``COUNT_OPS`` of :mod:`agentguard.semantics.predicates`).

Only a constraint that *is* such a count (under any number of negations) becomes a
counter; a count inside a larger formula still follows its compiled plan.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from agentguard.language import ast as A
from agentguard.monitor.persistence import expect_int, expect_list, expect_mapping
from agentguard.monitor.plans import FallbackPlan, Plan
from agentguard.monitor.state_sets import call_from_doc
from agentguard.monitor.verdict import Classification, Enforceability, Verdict
from agentguard.trace.model import Call

OPS: Final[Mapping[str, Callable[[int, int], bool]]] = {
    "=": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
"""``count op n`` for every op a counter meets (``!=`` only as a negated ``=``)."""
COMPLEMENT: Final = {"=": "!=", "!=": "=", ">=": "<", "<": ">=", "<=": ">", ">": "<="}
"""``!CalledN(t, n, op)`` is ``CalledN(t, n, COMPLEMENT[op])``."""


class CountNode:
    """The number of calls to one tool, compared with a constant (see the module)."""

    def __init__(self, tool: str, limit: int, op: str) -> None:
        self.tool = tool
        self.limit = limit
        self.op = op
        self.test = OPS[op]
        self.count = 0
        self.error: str | None = None
        self._names = frozenset((tool,))

    @property
    def names(self) -> frozenset[str] | None:
        return self._names

    @property
    def counts(self) -> bool:
        return False  # it counts one tool's calls, not the metrics record's

    def stable(self) -> bool:
        return True  # a call to another tool leaves the count as it is

    def step(self, call: Call) -> None:
        if call.name == self.tool:
            self.count += 1

    def verdict(self) -> Verdict:
        return self._verdict(self.count)

    def _verdict(self, count: int) -> Verdict:
        """Decided when every larger count gives the same truth as ``count``."""
        op, n = self.op, self.limit
        if op in (">=", ">", "!="):  # false, then true for good once past the bound
            return (
                Verdict.SATISFIED if count > n or (op == ">=" and count == n) else Verdict.PENDING
            )
        # "<=", "<", "=": true (or not yet), then false for good once past the bound
        return Verdict.VIOLATED if count > n or (op == "<" and count == n) else Verdict.PENDING

    def final(self) -> bool | None:
        return self.test(self.count, self.limit)

    def finish(self, metrics: Mapping[str, Any]) -> bool:  # noqa: ARG002 - counts calls only
        return self.test(self.count, self.limit)

    def peek(
        self,
        calls: Sequence[Call],
        ending: bool,
        errors: list[str],  # noqa: ARG002
    ) -> tuple[Verdict, bool | None]:
        count = self.count + sum(1 for c in calls if c.name == self.tool)
        return self._verdict(count), self.test(count, self.limit) if ending else None

    def classify(self) -> Classification:
        """Too many calls is always a bad prefix (safety); too few, or exactly ``n`` for
        ``!=``, shows only at the end (liveness), when the bound leaves room for it."""
        op, n = self.op, self.limit
        too_few = (op in (">=", "=") and n > 0) or (op in (">", "!=") and n >= 0)
        if not too_few:
            return Classification(Enforceability.SAFETY)
        return Classification(Enforceability.MIXED if op == "=" else Enforceability.LIVENESS)

    def over_budget(self) -> bool:
        return False

    def save(self) -> dict[str, Any]:
        return {"count": self.count}

    def restore(self, doc: Mapping[str, Any]) -> None:
        """A counter's state, or a state saved when such a count kept its calls."""
        doc = expect_mapping(doc, "a constraint's state")
        if "calls" in doc:
            calls = expect_list(doc.get("calls"), "kept calls")
            self.count = sum(
                1 for i, d in enumerate(calls) if call_from_doc(d, i).name == self.tool
            )
            return
        self.count = expect_int(doc.get("count"), "count")

    def clone(self) -> CountNode:
        """This counter in its current state (plain values only), attributes set as in
        ``__init__``."""
        new = CountNode.__new__(CountNode)
        new.tool = self.tool
        new.limit = self.limit
        new.op = self.op
        new.test = self.test
        new.count = self.count
        new.error = self.error
        new._names = self._names
        return new


def count_node(plan: Plan) -> CountNode | None:
    """A counter for a constraint that is a count too large to unroll, else None."""
    if not isinstance(plan, FallbackPlan):
        return None
    f, negated = plan.formula, False
    while isinstance(f, A.Not):
        f, negated = f.operand, not negated
    if not isinstance(f, A.TracePredicate) or f.name != "CalledN":
        return None
    tool, limit, op = f.args
    if not isinstance(tool, str) or not isinstance(limit, int) or op not in OPS:
        return None  # a tool bound by a quantifier, or a shape the resolver never builds
    return CountNode(tool, limit, COMPLEMENT[op] if negated else op)


__all__ = ["CountNode", "count_node"]
