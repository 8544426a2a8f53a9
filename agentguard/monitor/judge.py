"""Constraints with a user predicate that may raise: judged as the offline evaluator does.

Offline (:func:`~agentguard.scoring.verify.verify_trace`), a constraint whose evaluation
raises is violated and carries the error; *whether* it raises depends on what the
evaluator reaches on the whole trace. A user predicate's arguments are constants,
quantified values or metrics, so every application is position-independent and the
evaluator computes it as a scalar whenever it evaluates the subformula holding it, at
any position of a non-empty trace. It skips it only where it never reaches it: on the
empty trace (``G boom(1)`` holds there without asking ``boom``), after a scalar left
operand that decides ``&``, ``|`` or ``->`` (``Called(x) -> boom(1)`` asks nothing while
``x`` is not called), after a quantifier instance that decides the quantifier, and for
an instance never made (a parametric value not in the trace). The monitor's nodes
resolve predicates eagerly (at the start, or when an instance is made) and stop
following a decided constraint, so they raise where the evaluator may not, and may miss
what it reaches later.

This judge keeps the calls of a monitor whose spec has such constraints and settles
them by the evaluator itself, where the nodes cannot:

* ``finish`` judges offline on the kept calls (the same function ``verify_trace``
  applies) each that a node or probe saw raise, or that reads metrics (a predicate of a
  metric is known only then), so final verdicts and errors are the offline ones;
* once a node of one has raised, at a step or at the start, it is *judged*: each peek
  and step asks the evaluator about the trace with the call, reporting its error (the
  firewall's ``on_predicate_error`` then applies) or, without one, PENDING (the nodes,
  having raised, no longer know the verdict); a step whose trace raises leaves it
  VIOLATED for the rest of the run;
* a peek whose node raises asks the evaluator before reporting the error;
* applications the nodes never ask (simplified away by the compiler, dropped by a
  residual, a value a call brings to a parametric quantifier) are *probed*: evaluated
  with their known arguments at the start and for each new value, and an error judges
  the constraint (a parametric quantifier inside another is judged from the start).

Keeping calls is bounded (the firewall's memory is O(1) in run length by default): the
judge keeps at most :data:`KEPT_CALLS` calls *while no raise has been seen*, when the
nodes are exact. A run that reaches the bound with no raise drops its kept calls and the
judge goes *blind*: from then on a raise is the nodes' answer (the constraint violated
with the error, the behaviour before this judge), the one approximation. A run that
raised before the bound is being judged and keeps its calls up to
:data:`JUDGED_CALLS`, then goes blind as well (its cost per call stays bounded). A state saved
before the judge existed (no ``judge`` section) restores blind, unless it has no call
yet (its kept calls, none, are then known).

Constraints without a user predicate never reach this module: their per-call path is
unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agentguard._recursion import allow_deep
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.dialogue import judged as judged_trace
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.language.reads import reads_results
from agentguard.monitor.fallback import reads_metrics
from agentguard.monitor.judge_probes import Prober, node_raised, raises_at_start
from agentguard.monitor.persistence import expect_list, expect_mapping, expect_str
from agentguard.monitor.state_sets import call_doc, call_from_doc
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.explain import explain
from agentguard.semantics.registry import Matcher, Registry
from agentguard.trace.model import Call, Trace

KEPT_CALLS: Final = 10_000
"""The calls a judge keeps while nothing has raised: 3.2 MB at this bound for calls of two
arguments and a short text result (322 bytes a call, tracemalloc); past it with no raise
seen the judge goes blind (see the module)."""
JUDGED_CALLS: Final = 10_000
"""The calls a judge keeps once a raise has been seen: a judged constraint asks the
evaluator about the whole kept trace at each call, so past this bound the judge goes
blind too (a decided verdict stays; a pending one is the node's answer) and each call
costs what it costs without a judge: no run slows down with its length."""


@dataclass(frozen=True, slots=True)
class JudgePart:
    """One constraint's share of a judge at a point of the run (see :meth:`ErrorJudge.part`)."""

    calls: list[Call]  # the judge's kept calls: only the first ``count`` are this point's
    count: int
    held: Verdict | None
    error: str | None
    raised: bool
    blind: bool


class ErrorJudge:
    """The kept calls and the judged constraints of one monitor (see the module)."""

    def __init__(
        self,
        constraints: Sequence[A.Constraint],
        names: tuple[str, ...],
        registry: Registry,
        match: Matcher,
    ) -> None:
        by_name = {c.name: c for c in constraints}
        self.constraints = {n: by_name[n] for n in names}
        self.names = names
        self.registry = registry
        self.match = match
        self.dialogue = spec_mentions_dialogue(list(constraints))
        self.calls: list[Call] = []
        # judged constraints (a node of theirs raised) -> their verdict where the trace
        # raises nothing: PENDING, or what was decided before (VIOLATED after a step raised)
        self.held: dict[str, Verdict] = {}
        self.last: dict[str, Verdict] = {}  # every such constraint's verdict after a step
        self.errors: dict[str, str] = {}  # the evaluator's error on the kept calls
        self.prober = Prober(self.constraints, registry, match)
        self.nested = self.prober.nested  # a parametric quantifier inside another: judged
        self.metric = {n for n in names if reads_metrics(self.constraints[n].formula)}
        # what a call may make raise: the judged, and those a new value reaches (the
        # others' applications all had their arguments at the start, and none raised)
        self.active: list[str] = []
        self.settled: set[str] = set()  # judged at the end: the evaluator's error stands
        # a node, probe or the evaluator raised on this run: the calls are kept to the end
        self.raised = False
        # past KEPT_CALLS calls with no raise: no calls kept, the nodes' answer stands
        self.blind = False

    def start(self, nodes: Mapping[str, Any], verdicts: dict[str, Verdict]) -> None:
        """Judge the constraints whose node raised when it was built (PENDING: the empty
        trace may never evaluate the predicate, a call may or may not reach it)."""
        for name in self.names:
            formula = self.constraints[name].formula
            raised = node_raised(nodes[name]) or raises_at_start(formula, self.registry, self.match)
            if raised or name in self.nested:
                self.held[name] = verdicts[name] = Verdict.PENDING
            self.raised = self.raised or bool(raised)
            self.last[name] = verdicts[name]
        self._activate()

    def judges(self, name: str) -> bool:
        """Is the error of ``name`` the evaluator's (not its node's)?"""
        return name in self.held or name in self.settled

    def _activate(self) -> None:
        self.active = [n for n in self.names if n in self.held or n in self.prober.probes]
        self.active_set = frozenset(self.active)

    def go_blind(self, nodes: Mapping[str, Any], verdicts: dict[str, Verdict]) -> list[str]:
        """Drop the kept calls and leave every constraint to its node (see the module);
        the constraints whose verdict this changes."""
        changed = []
        for name in self.held:
            if verdicts[name] is not Verdict.PENDING:
                continue  # decided verdicts never change
            verdict = nodes[name].verdict()
            if verdict is not verdicts[name]:
                verdicts[name] = verdict
                changed.append(name)
        self._drop()
        return changed

    def _drop(self) -> None:
        """Blind: nothing kept, nothing judged (the verdicts are the nodes' own)."""
        self.blind = True
        self.calls = []
        self.prober = Prober({}, self.registry, self.match)
        self.nested = set()
        self.metric = set()
        self.errors = {}
        self.settled = set()
        self.held = {}
        self.last = {}
        self._activate()

    @allow_deep
    def result(
        self, name: str, calls: Sequence[Call], metrics: Mapping[str, Any]
    ) -> tuple[bool, str | None]:
        """``verify_trace``'s outcome of ``name`` on ``calls``: (passed, error), as its
        ``constraint_result`` finds it (whose module this one cannot import: a cycle)."""
        placed = tuple(c if c.position == i else c.at(i) for i, c in enumerate(calls))
        trace = judged_trace(Trace(placed, dict(metrics)), self.dialogue)
        ev = Evaluator(trace, registry=self.registry, match=self.match)
        formula = self.constraints[name].formula
        try:
            passed = ev.holds(formula)
            explain(formula, ev, passed)  # the report's details evaluate too: may raise
        except AgentGuardError as exc:
            return False, str(exc)
        except RecursionError:
            return False, "formula nested too deeply to evaluate"
        return passed, None

    def _shown(self, name: str, error: str | None) -> Verdict:
        return Verdict.VIOLATED if error is not None else self.held[name]

    # ------------------------------------------------------------------ commit
    def after_step(
        self,
        call: Call,
        nodes: Mapping[str, Any],
        verdicts: dict[str, Verdict],
        changed: list[str],
    ) -> list[str]:
        """Keep ``call`` (the nodes have stepped it) and judge what raised; ``changed``
        (the nodes' changes) corrected for these constraints."""
        if self.blind:
            return changed
        calls = self.calls
        calls.append(call)  # placed at its position only when judged (result)
        if self.held or self.prober.new_value(call):
            held = self.held
            fresh = [n for n in self.active if n not in held and self._raises(n, call, nodes)]
            if fresh or held:
                changed = self._judge_step(fresh, verdicts, changed)
        if changed and not self.held:  # the nodes' answers: what one raising later keeps
            last = self.last
            for n in changed:
                if n in last:
                    last[n] = verdicts[n]
        if len(calls) >= (JUDGED_CALLS if self.raised else KEPT_CALLS):
            changed = changed + [n for n in self.go_blind(nodes, verdicts) if n not in changed]
        return changed

    def _raises(self, name: str, call: Call, nodes: Mapping[str, Any]) -> bool:
        """Did ``call`` make ``name`` raise: a new value its probe or its node saw? The
        node resolves a predicate as an instance is made, for a new value; with none, a
        raise can only come from a predicate that raised nowhere before on the same
        arguments (impure), and is the node's answer."""
        probed = self.prober.probe(name, (call,), True)
        if probed is None:
            return False  # no new value: no new instance either
        return probed or node_raised(nodes[name])

    def _judge_step(
        self, fresh: list[str], verdicts: dict[str, Verdict], changed: list[str]
    ) -> list[str]:
        """The active constraints after the call just kept: judged where one raised."""
        held, last = self.held, self.last
        for name in fresh:  # raised now: decided before, it stays so (else PENDING)
            self.raised = True
            held[name] = last[name]
        for name in self.active:
            if name not in held:
                continue
            _, error = self.result(name, self.calls, {})
            if error is None:
                self.errors.pop(name, None)
            else:
                self.raised = True
                self.errors[name] = error
                held[name] = Verdict.VIOLATED  # a call that ran raised: violated from now on
            verdicts[name] = self._shown(name, error)
        active = self.active_set
        out = [n for n in changed if n not in active]  # the others' change is the nodes'
        for name in self.active:
            if verdicts[name] is not last[name]:
                out.append(name)
                last[name] = verdicts[name]
        return out

    # ------------------------------------------------------------------ peek
    def on_peek(
        self,
        batch: Sequence[Call],
        ending: bool,
        current: Mapping[str, Verdict],
        verdicts: dict[str, Verdict] | None,
        errors: dict[str, tuple[str, ...]] | None,
        final: dict[str, bool | None],
    ) -> tuple[dict[str, Verdict] | None, dict[str, tuple[str, ...]] | None]:
        """Settle the peek of ``batch`` where the nodes cannot: the judged constraints,
        and those whose node raised or a new value of which raises in this peek. Returns
        the peek's verdicts and errors (made here where they were None)."""
        for name in self.active:
            if (
                name not in self.held
                and (errors is None or name not in errors)
                and self.prober.probe(name, batch, False) is not True
            ):
                continue  # nothing raises: the nodes' answer stands
            passed, error = self.result(name, [*self.calls, *batch], {})
            if verdicts is None:
                verdicts = dict(current)
            if name in self.held:
                verdicts[name] = self._shown(name, error)
            else:  # the node raised in this peek: a step would judge it from now on
                verdicts[name] = Verdict.VIOLATED if error is not None else current[name]
            if error is None:
                if errors is not None:
                    errors.pop(name, None)
            else:
                errors = {} if errors is None else errors
                errors[name] = (error,)
            if ending:
                final[name] = False if error is not None else self._final(name, batch, passed)
        return verdicts, errors

    def _final(self, name: str, batch: Sequence[Call], passed: bool) -> bool | None:
        """The truth at the end, unless it may hang on metrics or a result to come."""
        f = self.constraints[name].formula
        if reads_metrics(f) or (any(not c.has_result for c in batch) and reads_results(f)):
            return None
        return passed

    def final(self, name: str) -> bool | None:
        """The truth of a judged constraint if the run ended now."""
        passed, error = self.result(name, self.calls, {})
        return False if error is not None else self._final(name, (), passed)

    # ------------------------------------------------------------------ end
    def finish(self, metrics: Mapping[str, Any], nodes: Mapping[str, Any]) -> dict[str, bool]:
        """The judged constraints, those whose node raised at the end and those reading
        metrics (a predicate may take one, known only now), judged offline on the kept
        calls with ``metrics`` (errors kept). The others raise nothing offline either: no
        application their arguments can reach raised (the nodes', the probes'), so the
        nodes' verdicts are the evaluator's."""
        out: dict[str, bool] = {}
        if self.blind:  # nothing kept: the nodes' verdicts and errors stand
            return out
        for name in self.names:
            if name not in self.held and name not in self.metric and not node_raised(nodes[name]):
                continue
            passed, error = self.result(name, self.calls, metrics)
            out[name] = passed
            self.settled.add(name)
            if error is None:
                self.errors.pop(name, None)
            else:
                self.errors[name] = error
        return out

    # ------------------------------------------------------------------ state files
    def save(self) -> dict[str, Any]:
        return {
            "calls": [call_doc(c) for c in self.calls],
            "held": {n: v.name for n, v in self.held.items()},
            "errors": dict(self.errors),
            "raised": self.raised,
            "blind": self.blind,
        }

    def part(self, name: str) -> JudgePart:
        """What a monitor of ``name`` alone needs to go on from here (a fork): the kept
        calls are append-only, so the list and its length now are the prefix (no copy)."""
        return JudgePart(
            self.calls,
            len(self.calls),
            self.held.get(name),
            self.errors.get(name),
            self.raised,
            self.blind,
        )

    def go_on(self, name: str, part: JudgePart, verdicts: dict[str, Verdict]) -> None:
        """Continue ``name`` from ``part`` (taken by :meth:`part` of another judge);
        ``verdicts`` are the nodes' own."""
        if part.blind:
            self._drop()
            return
        self.raised = part.raised
        self.calls = part.calls[: part.count]
        if part.held is not None:
            self.held[name] = part.held
        if part.error is not None:
            self.errors[name] = part.error
        if name in self.held:
            verdicts[name] = self._shown(name, part.error)
        self.last[name] = verdicts[name]
        self._activate()

    def restore_old(
        self, position: int, nodes: Mapping[str, Any], verdicts: dict[str, Verdict]
    ) -> None:
        """Go on from a state saved before this judge existed (no ``judge`` section):
        with no call yet the kept calls are known (none), else blind (see the module)."""
        if position == 0:
            self.start(nodes, verdicts)
        else:
            self._drop()

    def restore(self, doc: Mapping[str, Any], verdicts: dict[str, Verdict]) -> None:
        """Put a saved judge back; ``verdicts`` (the nodes' own) get the judged ones."""
        doc = expect_mapping(doc, "the kept calls")
        if doc.get("blind", False) is True:
            self._drop()
            return
        calls = expect_list(doc.get("calls"), "kept calls")
        self.calls = [call_from_doc(d, i) for i, d in enumerate(calls)]
        held = expect_mapping(doc.get("held"), "judged constraints")
        errors = expect_mapping(doc.get("errors"), "errors")
        known = set(self.names)
        if not set(held) <= known or not set(errors) <= known:
            raise ValueError("the kept calls name constraints that are not this spec's")
        self.held = {str(n): Verdict[expect_str(v, "a verdict") or ""] for n, v in held.items()}
        self.errors = {str(n): expect_str(e, "an error") or "" for n, e in errors.items()}
        raised = doc.get("raised", bool(self.errors) or bool(set(self.held) - self.nested))
        if not isinstance(raised, bool):
            raise ValueError("the judge's 'raised' is not a boolean")
        self.raised = raised
        for name in self.names:
            if name in self.held:
                verdicts[name] = self._shown(name, self.errors.get(name))
            self.last[name] = verdicts[name]
        self._activate()
