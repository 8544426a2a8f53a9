"""The node of a constraint the machine cannot follow: kept whole, judged at the end.

``Predicate(f)``, user extractors, quantifiers under temporal operators and the other
shapes the compiler refuses (monitor/compile.py) keep their calls and are evaluated by the
offline evaluator when the run ends: PENDING until then, never a wrong verdict. A peek that
ends the run answers early where the answer cannot hang on metrics or missing results.
A formula that reads the trace only through unions over calls forgets the calls that add
nothing to them (monitor/unions.py), so its memory stops growing when the run repeats itself.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.reads import reads_results
from agentguard.monitor.persistence import expect_list, expect_mapping, expect_str
from agentguard.monitor.state_sets import call_doc, call_from_doc
from agentguard.monitor.unions import CallKeys, union_keys
from agentguard.monitor.verdict import Classification, Enforceability, Verdict
from agentguard.semantics.registry import Matcher, Registry
from agentguard.trace.model import Call, Trace


class FallbackNode:
    """Kept as a whole trace and evaluated offline at the end (PENDING meanwhile).

    A shallow copy is a snapshot (``COPYABLE``, monitor/peek.py): the copy shares the list
    of kept calls and remembers its length, and the first of the two to step past a
    shared prefix copies it. A snapshot per executed call (the firewall takes one of each
    constraint a result may break) costs nothing, where saving the calls each time made
    every step cost as much as the run so far."""

    def __init__(self, formula: A.Formula, reason: str, registry: Registry, match: Matcher) -> None:
        self.formula = formula
        self.reason = reason
        self.registry = registry
        self.match = match
        self._calls: list[Call] = []  # maybe shared with copies: only the first _n are ours
        self._n = 0
        self.error: str | None = None
        self._reads_metrics = reads_metrics(formula)  # asked on each peek that ends the run
        self._keys: CallKeys | None = union_keys(formula, registry)
        # each key the kept calls added -> the kept index that added it (shared like
        # _calls: a key is ours if its index is below _n)
        self._seen: dict[Hashable, int] = {}

    @property
    def calls(self) -> Sequence[Call]:
        """The calls kept so far (this node's, whichever copy shares the list)."""
        calls = self._calls
        return calls if len(calls) == self._n else calls[: self._n]

    @property
    def names(self) -> frozenset[str] | None:
        return None

    @property
    def counts(self) -> bool:
        return False  # metrics are read at the end, from the metrics record

    def stable(self) -> bool:
        return False

    def step(self, call: Call) -> None:
        n = self._n
        new: list[Hashable] = []
        if self._keys is not None:
            seen = self._seen
            new = [k for k in self._keys(call) if seen.get(k, n) >= n]
            if n and not new:
                return  # it adds nothing to the unions the formula reads: same truth
        if len(self._calls) != n:  # a copy stepped past our prefix: ours is a copy
            self._calls = self._calls[:n]
            self._seen = {k: i for k, i in self._seen.items() if i < n}
        self._calls.append(call.at(n))
        for k in new:
            self._seen[k] = n
        self._n = n + 1

    def verdict(self) -> Verdict:
        return Verdict.PENDING

    def _holds(
        self, calls: Sequence[Call], metrics: Mapping[str, Any], errors: list[str] | None
    ) -> bool:
        from agentguard.semantics.evaluator import Evaluator

        try:
            trace = Trace(tuple(calls), dict(metrics))
            return Evaluator(trace, registry=self.registry, match=self.match).holds(self.formula)
        except AgentGuardError as exc:
            if errors is not None:
                errors.append(str(exc))
            else:
                self.error = str(exc)
            return False

    def final(self) -> bool | None:
        return None

    def finish(self, metrics: Mapping[str, Any]) -> bool:
        return self._holds(self.calls, metrics, None)

    def peek(
        self, calls: Sequence[Call], ending: bool, errors: list[str]
    ) -> tuple[Verdict, bool | None]:
        if not ending:
            return Verdict.PENDING, None
        if self._reads_metrics:
            return Verdict.PENDING, None
        if any(not c.has_result for c in calls) and reads_results(self.formula):
            return Verdict.PENDING, None  # the truth may hang on the result still to come
        return Verdict.PENDING, self._holds([*self.calls, *calls], {}, errors)

    def over_budget(self) -> bool:
        return False

    def classify(self) -> Classification:
        return Classification(Enforceability.MIXED, False, f"checked at the end: {self.reason}")

    def save(self) -> dict[str, Any]:
        return {"calls": [call_doc(c) for c in self.calls], "error": self.error}

    def restore(self, doc: Mapping[str, Any]) -> None:
        doc = expect_mapping(doc, "a constraint's state")
        calls = expect_list(doc.get("calls"), "kept calls")
        self._calls = [call_from_doc(d, i) for i, d in enumerate(calls)]
        self._n = len(self._calls)
        keys = self._keys
        self._seen = {}
        if keys is not None:
            for i, c in enumerate(self._calls):
                for k in keys(c):
                    self._seen.setdefault(k, i)
        self.error = expect_str(doc.get("error"), "error", optional=True)

    def clone(self) -> FallbackNode:
        """This node in its current state, with its own list of kept calls."""
        new = FallbackNode.__new__(FallbackNode)
        new.formula = self.formula
        new.reason = self.reason
        new.registry = self.registry
        new.match = self.match
        new._calls = list(self.calls)
        new._n = self._n
        new._keys = self._keys
        new._seen = {k: i for k, i in self._seen.items() if i < self._n}
        new.error = self.error
        new._reads_metrics = self._reads_metrics
        return new


def reads_metrics(f: Any) -> bool:
    if isinstance(f, A.MetricRef):
        return True
    if isinstance(f, tuple):
        return any(reads_metrics(x) for x in f)
    if hasattr(f, "__dataclass_fields__"):
        return any(reads_metrics(getattr(f, n)) for n in f.__dataclass_fields__ if n != "span")
    return False
