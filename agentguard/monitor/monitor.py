"""``Monitor``: three-valued verdicts per constraint, one call at a time.

Design (see docs/monitor.md): formula progression with hash-consed residuals in DNF,
memoised per (state, letter), which builds each constraint's automaton lazily; past-time
operators are registers; verdicts come from a memoised reachability question on that
automaton. A call only visits the constraints that mention its tool, plus those whose
state would change on any call, so the work per call does not grow with the trace; of
quantified constraints sharing a tool, it skips those it provably cannot move (the
router, monitor/routing.py), so it does not grow with their number either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from agentguard._recursion import allow_deep
from agentguard.language import ast as A
from agentguard.monitor.compiled import CompiledSpec, compile_spec
from agentguard.monitor.hints import hint
from agentguard.monitor.judge import ErrorJudge
from agentguard.monitor.machine import BUDGET_HITS
from agentguard.monitor.nodes import Node
from agentguard.monitor.peek import Peek, Snapshot
from agentguard.monitor.persisting import STATE_FORMAT, MonitorStateError, Persisting
from agentguard.monitor.prototype import MonitorPrototype, MonitorStart, prototype
from agentguard.monitor.routing import Plan, Router
from agentguard.monitor.signing import Key
from agentguard.monitor.verdict import Classification, Verdict
from agentguard.semantics.provenance_index import ProvenanceState, views
from agentguard.semantics.registry import Matcher, Registry, default_registry
from agentguard.trace.model import DIALOGUE_NAMES, Call

_NONE: Final[Mapping[str, Any]] = MappingProxyType({})


class Monitor(Persisting):
    """Monitors every constraint of a spec (or a list of constraints); its state files
    and forks are :class:`~agentguard.monitor.persisting.Persisting`'s."""

    @allow_deep
    def __init__(
        self,
        spec: A.Spec | Sequence[A.Constraint] | CompiledSpec,
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        uncounted: Iterable[str] = (),
    ) -> None:
        registry = registry or default_registry
        compiled = (
            spec
            if isinstance(spec, CompiledSpec)
            else compile_spec(spec, registry=registry, match=match)
        )
        uncounted = frozenset(uncounted) | DIALOGUE_NAMES  # messages are no tool calls
        self._start(prototype(compiled, registry, uncounted))

    @classmethod
    def from_prototype(cls, proto: MonitorPrototype) -> Monitor:
        """A monitor starting from ``proto`` (what ``Monitor(proto.compiled,
        registry=proto.registry, uncounted=proto.uncounted)`` builds, without looking the
        prototype up: a firewall keeps its own)."""
        m = cls.__new__(cls)
        m._start(proto)
        return m

    def _start(self, proto: MonitorPrototype) -> None:
        """Take what depends on the spec alone from ``proto`` (monitor/prototype.py): this
        monitor owns clones of the start nodes and copies of the indexes."""
        compiled = proto.compiled
        self.registry = proto.registry
        self.compiled = compiled
        self.constraints: tuple[A.Constraint, ...] = compiled.constraints
        self.match: Matcher = compiled.match
        self.position = 0
        self.uncounted = proto.uncounted
        self._nodes: dict[str, Node] = proto.nodes()
        start = proto.start or MonitorStart.of(self._nodes)
        # budget constraints keep stepping once decided: finish(metrics) re-reads them
        self._counting = start.counting
        self._by_name: dict[str, tuple[str, ...]] = (
            start.by_name.copy()
        )  # a proxy's copy: a C dict copy
        self._always: tuple[str, ...] = start.always
        self._verdicts: dict[str, Verdict] = start.verdicts.copy()
        self._view = MappingProxyType(self._verdicts)
        # while no verdict changes, the peek of a call that moves none (most calls): a
        # frozen copy of the verdicts, answered instead of copying them all each time
        self._still: Peek | None = None
        self._unstable: set[str] = set(start.unstable)
        self._fingerprint = compiled.fingerprint
        self._budget_seen = -1
        self._over: tuple[str, ...] = ()
        self._router = Router.wire(start.routes, self._nodes)
        # `from` facts and decoded results: each call is judged as its view (provenance)
        plan = compiled.provenance
        self._prov: ProvenanceState | None = None if plan is None else ProvenanceState(plan)
        # constraints with a user predicate are settled by the evaluator where their
        # nodes raise, and at the end (monitor/judge.py); None: the spec has none
        self._judge: ErrorJudge | None = None
        if proto.raisable:
            self._judge = ErrorJudge(
                self.constraints, proto.raisable_names, self.registry, self.match
            )
            self._judge.start(self._nodes, self._verdicts)

    @classmethod
    def for_formula(
        cls,
        formula: A.Formula,
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        uncounted: Iterable[str] = (),
    ) -> FormulaMonitor:
        """A monitor of one formula whose ``step`` returns a single :class:`Verdict`."""
        return FormulaMonitor(formula, registry=registry, match=match, uncounted=uncounted)

    # ------------------------------------------------------------------ queries
    @property
    def verdicts(self) -> Mapping[str, Verdict]:
        """The current verdict of every constraint (a live read-only view)."""
        return self._view

    def classification(self) -> dict[str, Classification]:
        """Safety / mixed / liveness of every constraint (LTLf, see docs/monitor.md)."""
        return {name: node.classify() for name, node in self._nodes.items()}

    def over_budget(self) -> tuple[str, ...]:
        """Constraints whose automaton exceeded the state budget (``MAX_EXPLORE`` states):
        from then on their verdicts are sound but may come late (PENDING until a residual
        is decided, or the end). Cheap to poll: recomputed only after a machine hit it."""
        hits = BUDGET_HITS[0]
        if hits != self._budget_seen:
            self._budget_seen = hits
            self._over = tuple(n for n, node in self._nodes.items() if node.over_budget())
        return self._over

    def pending(self) -> tuple[str, ...]:
        return tuple(n for n, v in self._verdicts.items() if v is Verdict.PENDING)

    def node(self, name: str) -> Node:
        return self._nodes[name]

    def affected(self, name: str) -> Iterable[str]:
        """Constraints a call to ``name`` may move (the others stay as they are)."""
        return self._affected(name)

    def _affected(self, name: str) -> Iterable[str]:
        """Constraints a call to ``name`` may move (the others stay as they are)."""
        by_name = self._by_name.get(name)
        if not self._unstable and not self._always:
            return by_name or ()
        out = dict.fromkeys(by_name or ())
        out.update(dict.fromkeys(self._always))
        out.update(dict.fromkeys(self._unstable))
        return out

    def _build_router(self) -> Router | None:
        """The router of the undecided constraints (rebuilt whenever nodes are replaced)."""
        pending = Verdict.PENDING
        return Router.build({n: x for n, x in self._nodes.items() if self._verdicts[n] is pending})

    def _visits(self, name: str, plan: Plan) -> list[str]:
        """The constraints a call to ``name`` may move, less those ``plan`` skips."""
        if len(plan.parts) == 1 and not self._unstable and not self._always:
            skips = plan.parts[0][0]  # the same for every call of its signature: kept
            if skips.visit is None:
                skips.visit = [n for n in self._by_name.get(name, ()) if n not in skips.skip]
            return skips.visit
        return [n for n in self._affected(name) if n not in plan.skip]

    # ------------------------------------------------------------------ commit
    def step(self, call: Call) -> Mapping[str, Verdict]:
        """Append a call (with its result, if known) and return the verdicts."""
        self.advance(call)
        return self._view

    def advance(self, call: Call) -> list[str]:
        """Append a call; return the constraints whose verdict changed."""
        prov = self._prov
        if prov is not None:
            call = prov.view(call)
            prov.add(call)
        self.position += 1
        verdicts = self._verdicts
        changed: list[str] = []
        router = self._router
        plan = router.plan(call) if router is not None else None
        names: Iterable[str]
        if plan is not None:
            names = self._visits(call.name, plan)
        elif self._unstable or self._always:
            names = self._affected(call.name)  # a copy: the loop below edits _unstable
        else:  # _affected's common case, inlined (a call per step)
            names = self._by_name.get(call.name, ())
        for name in names:
            before = verdicts[name]
            node = self._nodes[name]
            if before is not Verdict.PENDING:
                if name in self._counting:
                    node.step(call)  # the verdict stays; the symbolic state is for finish
                continue  # decided verdicts never change
            node.step(call)
            after = verdicts[name] = node.verdict()
            if after is not before:
                changed.append(name)
                self._still = None
                if router is not None:
                    router.retire(name)
            if node.names is not None:
                if node.stable():
                    self._unstable.discard(name)
                else:
                    self._unstable.add(name)
        if plan is not None:
            plan.commit()
        if self._judge:  # as cheap as a flag: the spec has a user predicate
            changed = self._judge.after_step(call, self._nodes, verdicts, changed)
            if changed:
                self._still = None
        return changed

    def peek(self, calls: Call | Sequence[Call], *, ending: bool = False) -> Peek:
        """Verdicts if ``calls`` were appended (results unknown unless given), not committed."""
        batch = [calls] if isinstance(calls, Call) else list(calls)
        if self._prov is not None:
            batch = views(self._prov, batch)
        if len(batch) == 1:
            tool = batch[0].name
            plan = self._router.plan(batch[0]) if self._router is not None else None
            # a skipped constraint's verdict and truth at the end stay (monitor/routing.py)
            names: Iterable[str]
            if plan is not None:
                names = self._visits(tool, plan)
            elif self._unstable or self._always:
                names = self._affected(tool)
            else:  # _affected's common case, inlined (a call per proposal)
                names = self._by_name.get(tool, ())
        else:
            merged: dict[str, None] = {}
            for c in batch:
                merged.update(dict.fromkeys(self._affected(c.name)))
            names = merged
        current = self._verdicts
        pending, nodes = Verdict.PENDING, self._nodes
        verdicts: dict[str, Verdict] | None = None  # copied at the first change
        final: dict[str, bool | None] = {}
        errors: dict[str, tuple[str, ...]] | None = None  # made at the first error
        changed: list[str] = []
        for name in names:
            before = current[name]
            if before is not pending:
                continue  # decided verdicts never change
            errs: list[str] = []
            v, f = nodes[name].peek(batch, ending, errs)
            if v is not before:
                if verdicts is None:
                    verdicts = dict(current)
                changed.append(name)
                verdicts[name] = v
            if ending:
                final[name] = f
            if errs:
                if errors is None:
                    errors = {}
                errors[name] = tuple(errs)
        if self._judge and self._judge.active:  # the evaluator's word where one raises
            verdicts, errors = self._judge.on_peek(batch, ending, current, verdicts, errors, final)
            if verdicts is not None:
                changed = [n for n in verdicts if verdicts[n] is not current[n]]
                if not changed:
                    verdicts = None
            if not errors:
                errors = None
        if ending:
            for name, node in nodes.items():
                if name not in final:
                    final[name] = self._final_of(name, node)
        if verdicts is None:
            still = self._still
            if still is None:
                still = self._still = Peek(MappingProxyType(dict(current)), _NONE, _NONE, ())
            if not final and errors is None:
                return still  # nothing of this call's own: the answer every such call gets
            return Peek(still.verdicts, final, errors, ())
        return Peek(verdicts, final, errors, tuple(changed))

    def _final_of(self, name: str, node: Node) -> bool | None:
        judge = self._judge
        if judge is not None and name in judge.held:
            return judge.final(name)
        v = self._verdicts[name]
        if v is Verdict.SATISFIED:
            return True
        if v is Verdict.VIOLATED:
            return False
        return node.final()

    def peek_end(self) -> dict[str, bool | None]:
        """Truth of every constraint if the run ended now (None where not known yet)."""
        return {name: self._final_of(name, node) for name, node in self._nodes.items()}

    def finish(self, metrics: Mapping[str, Any] | None = None) -> dict[str, Verdict]:
        """Final verdicts (SATISFIED or VIOLATED), equal to the offline evaluator's.

        ``metrics`` is the run's metrics record (for ``metrics.*`` comparisons); it decides
        ``metrics.num_tool_calls`` budgets too, even those the count decided online. Does
        not end the monitor: stepping on afterwards is allowed.
        """
        out = {}
        for name, node in self._nodes.items():
            v = self._verdicts[name]
            if v is Verdict.PENDING or node.error or name in self._counting:
                ok = node.finish(metrics or {})
            else:
                ok = v is Verdict.SATISFIED
            out[name] = Verdict.SATISFIED if ok else Verdict.VIOLATED
        if self._judge is not None:  # what raised is judged by the evaluator (judge.py)
            for name, ok in self._judge.finish(metrics or {}, self._nodes).items():
                out[name] = Verdict.SATISFIED if ok else Verdict.VIOLATED
        return out

    def errors(self) -> dict[str, str]:
        """Constraints whose evaluation raised (a user predicate): violated, as offline.
        A constraint with a user predicate has the evaluator's error on the calls so far
        (after :meth:`finish`, on the whole run; monitor/judge.py)."""
        judge = self._judge
        out = {
            n: node.error
            for n, node in self._nodes.items()
            if node.error and (judge is None or not judge.judges(n))
        }
        if judge is not None:
            out.update(judge.errors)
        return out

    # ------------------------------------------------------------------ hints
    def hint(self, name: str, proposed: Call | None = None, *, ending: bool = False) -> str:
        """What would satisfy ``name``: calls to make before ``proposed`` (or before ending)."""
        if proposed is not None and self._prov is not None:
            proposed = self._prov.view(proposed)  # the call as the lowered spec reads it
        return hint(self._nodes[name], proposed, self.position, self.uncounted, ending)


class FormulaMonitor:
    """A monitor of a single formula: ``step(call) -> Verdict``."""

    NAME: Final = "formula"

    def __init__(
        self,
        formula: A.Formula,
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        uncounted: Iterable[str] = (),
    ) -> None:
        self.formula = formula
        self.monitor = Monitor(
            [A.Constraint(self.NAME, formula)], registry=registry, match=match, uncounted=uncounted
        )

    @property
    def verdict(self) -> Verdict:
        return self.monitor.verdicts[self.NAME]

    @property
    def verdicts(self) -> Mapping[str, Verdict]:
        return self.monitor.verdicts

    def step(self, call: Call) -> Verdict:
        return self.monitor.step(call)[self.NAME]

    def peek(self, calls: Call | Sequence[Call], *, ending: bool = False) -> Peek:
        return self.monitor.peek(calls, ending=ending)

    def finish(self, metrics: Mapping[str, Any] | None = None) -> Verdict:
        return self.monitor.finish(metrics)[self.NAME]

    def classification(self) -> Classification:
        return self.monitor.classification()[self.NAME]

    def save(self, *, key: Key | None = None) -> dict[str, Any]:
        return self.monitor.save(key=key)

    @classmethod
    def restore(
        cls,
        formula: A.Formula,
        doc: Mapping[str, Any],
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        uncounted: Iterable[str] = (),
        key: Key | None = None,
    ) -> FormulaMonitor:
        """A monitor of ``formula`` continuing the run ``doc`` was saved from."""
        m = cls(formula, registry=registry, match=match, uncounted=uncounted)
        m.monitor._restore(doc, key)
        return m


def classify(
    formula: A.Formula, *, registry: Registry | None = None, match: Matcher | None = None
) -> Classification:
    """Safety / mixed / liveness of one formula over finite traces (for ``agentguard lint``)."""
    return FormulaMonitor(formula, registry=registry, match=match).classification()


__all__ = [
    "STATE_FORMAT",
    "FormulaMonitor",
    "Monitor",
    "MonitorStateError",
    "Peek",
    "Snapshot",
    "classify",
]
