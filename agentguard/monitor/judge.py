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
from agentguard.language.walk import children, subformulas
from agentguard.monitor.fallback import reads_metrics
from agentguard.monitor.persistence import expect_list, expect_mapping, expect_str
from agentguard.monitor.state_sets import call_doc, call_from_doc
from agentguard.monitor.verdict import Verdict
from agentguard.scoring.explain import explain
from agentguard.semantics.domains import values_at_site
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.registry import Matcher, Registry
from agentguard.semantics.values import freeze
from agentguard.semantics.variables import collect_sites
from agentguard.trace.model import Call, Trace

Site = tuple["str | None", "tuple[str | int, ...]", bool]

KEPT_CALLS: Final = 10_000
"""The calls a judge keeps while nothing has raised: 3.2 MB at this bound for calls of two
arguments and a short text result (322 bytes a call, tracemalloc); past it with no raise
seen the judge goes blind (see the module)."""
JUDGED_CALLS: Final = 10_000
"""The calls a judge keeps once a raise has been seen: a judged constraint asks the
evaluator about the whole kept trace at each call, so past this bound the judge goes
blind too (a decided verdict stays; a pending one is the node's answer) and each call
costs what it costs without a judge: no run slows down with its length."""


def may_raise(f: A.Formula) -> bool:
    """Does ``f`` apply a user predicate (``boom(x)``, ``Predicate(name)``)?"""
    return any(
        isinstance(g, A.UserPredicate)
        or (isinstance(g, A.TracePredicate) and g.name == "Predicate")
        for g in subformulas(f)
    )


def raisable(constraints: Sequence[A.Constraint]) -> tuple[str, ...]:
    """The names of the constraints whose evaluation may run a user predicate."""
    return tuple(c.name for c in constraints if may_raise(c.formula))


def raises_at_start(
    f: A.Formula,
    registry: Registry,
    match: Matcher,
    env: Mapping[str, Any] | None = None,
    ev: Evaluator | None = None,
) -> str | None:
    """The error of a user predicate application of ``f`` whose arguments are known under
    ``env`` (constants, values of fixed domains), else None. The nodes may never ask one
    (the compiler simplifies ``boom(1) -> boom(1)`` away, a residual drops what it no
    longer needs) where the evaluator still does: such an error makes the node's answer
    unreliable, and the constraint is judged."""
    ev = ev or Evaluator(Trace(()), registry=registry, match=match)
    stack: list[tuple[A.Formula, dict[str, Any]]] = [(f, dict(env or {}))]
    while stack:
        g, env = stack.pop()
        try:
            if isinstance(g, A.Quantified):
                inner = {k: v for k, v in env.items() if k != g.var}  # shadowed
                if isinstance(g.domain, A.ListLiteral) and ev.free_vars(g.domain) <= set(env):
                    stack.extend((g.body, {**inner, g.var: v}) for v in ev.domain(g.domain, env))
                else:  # a domain from the trace: what does not read the variable
                    stack.append((g.body, inner))
                continue
            if isinstance(g, A.UserPredicate):
                if ev.free_vars(g) <= set(env):
                    ev.empty_value(g, env)
                continue
        except AgentGuardError as exc:
            return str(exc)
        stack.extend((c, env) for c in children(g))
    return None


Probe = tuple[A.Quantified, tuple[Site, ...]]
# a probed site: its quantifier, field path, element-wise flag, and the values the
# quantifier has had probed (one set per quantifier, shared by its sites)
ProbeSite = tuple[A.Quantified, "tuple[str | int, ...]", bool, set[Any]]
# a constraint's probe sites by tool (each list with the sites of any tool), and the
# sites of any tool alone (for a tool no site names)
ProbeIndex = tuple[dict[str, list[ProbeSite]], list[ProbeSite]]


def probe_index(probes: Sequence[Probe]) -> ProbeIndex:
    """The sites of ``probes`` by tool, so a call reads only its own tool's sites."""
    seen: dict[int, set[Any]] = {id(q): set() for q, _ in probes}
    anywhere = [
        (q, path, elements, seen[id(q)])
        for q, sites in probes
        for tool, path, elements in sites
        if tool is None
    ]
    by_tool: dict[str, list[ProbeSite]] = {}
    for q, sites in probes:
        for tool, path, elements in sites:
            if tool is not None:
                by_tool.setdefault(tool, list(anywhere)).append((q, path, elements, seen[id(q)]))
    return by_tool, anywhere


# a site any probed constraint reads on a tool: its path, element-wise flag, probed
# values, and its key when the site is one plain argument (read without a call)
ToolSite = tuple["tuple[str | int, ...]", bool, set[Any], "str | None"]


def tool_sites(
    probes: Mapping[str, ProbeIndex],
) -> tuple[dict[str, list[ToolSite]], list[ToolSite]]:
    """Every probed constraint's sites by tool (with those of any tool), and those of any
    tool alone: a step looks at its tool's list only, and only for a new value."""

    def site(s: ProbeSite) -> ToolSite:
        _, path, elements, seen = s
        key = path[0] if len(path) == 1 and not elements else None
        return path, elements, seen, key if isinstance(key, str) and key != "result" else None

    tools = {t for by_tool, _ in probes.values() for t in by_tool}
    anywhere = [site(s) for _, any_tool in probes.values() for s in any_tool]
    by_tool = {
        t: [site(s) for index, any_tool in probes.values() for s in index.get(t, any_tool)]
        for t in tools
    }
    return by_tool, anywhere


def applications(q: A.Quantified, ev: Evaluator) -> tuple[A.UserPredicate, ...] | None:
    """The user predicate applications :func:`raises_at_start` evaluates in ``q``'s body
    under ``q``'s variable alone, if the body has no quantifier (None: walk it per value)."""
    out: list[A.UserPredicate] = []
    stack: list[A.Formula] = [q.body]
    known = {q.var}
    while stack:
        g = stack.pop()
        if isinstance(g, A.Quantified):
            return None
        if isinstance(g, A.UserPredicate):
            if ev.free_vars(g) <= known:
                out.append(g)
            continue
        stack.extend(children(g))
    return tuple(out)


def parametric(f: A.Formula) -> tuple[list[Probe], bool]:
    """The parametric quantifiers of ``f`` with their sites, and whether one lies inside
    another quantifier (its values then combine with the outer ones: not probed alone)."""
    out: list[Probe] = []
    nested = False
    stack: list[tuple[A.Formula, bool]] = [(f, False)]
    while stack:
        g, inside = stack.pop()
        if isinstance(g, A.Quantified):
            if g.domain is None:
                nested = nested or inside
                sites: list[Site] = []
                collect_sites(g.body, g.var, sites)
                out.append((g, tuple(sites)))
            stack.append((g.body, True))
            continue
        stack.extend((c, inside) for c in children(g))
    return out, nested


def node_raised(node: Any) -> bool:
    """Has ``node`` or a part of it (a boolean combination's children) raised?"""
    if getattr(node, "error", None):
        return True
    children: Sequence[Any] = getattr(node, "children", None) or ()
    return any(node_raised(c) for c in children)


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
        # each constraint's parametric quantifiers, whose new values are probed per call,
        # with the values probed so far (an optimisation only: not saved)
        self.probes: dict[str, ProbeIndex] = {}
        self.nested: set[str] = set()  # a parametric quantifier inside another: judged
        for name in names:
            probes, nested = parametric(self.constraints[name].formula)
            if nested:
                self.nested.add(name)
            elif probes:
                self.probes[name] = probe_index(probes)
        self.tool_sites, self.any_sites = tool_sites(self.probes)
        self._empty: Evaluator | None = None  # for the probes, made at the first one
        self._apps: dict[int, tuple[A.UserPredicate, ...] | None] = {}
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
        self.active = [n for n in self.names if n in self.held or n in self.probes]
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
        self.probes = {}
        self.tool_sites, self.any_sites = {}, []
        self._empty, self._apps = None, {}
        self.nested = set()
        self.metric = set()
        self.errors = {}
        self.settled = set()
        self.held = {}
        self.last = {}
        self._activate()

    def _probe(self, name: str, calls: Sequence[Call], commit: bool) -> bool | None:
        """Does a value ``calls`` bring to a parametric quantifier of ``name`` make one of
        its predicate applications raise? None: no value is new."""
        probes = self.probes.get(name)
        if probes is None:
            return None
        by_tool, anywhere = probes
        new: bool | None = None
        for c in calls:
            for q, path, elements, seen in by_tool.get(c.name, anywhere):
                for v in values_at_site(c, path, elements):
                    key = freeze(v)
                    if key in seen:
                        continue
                    if commit:
                        seen.add(key)
                    if self._raises_for(q, v):
                        return True
                    new = False
        return new

    def _raises_for(self, q: A.Quantified, value: Any) -> bool:
        """Does an application of ``q``'s body raise with ``value`` for its variable? A
        body with no quantifier inside has its applications listed once (those of the
        variable and constants alone); one evaluator of the empty trace serves them all."""
        ev = self._empty
        if ev is None:
            ev = self._empty = Evaluator(Trace(()), registry=self.registry, match=self.match)
        if id(q) not in self._apps:
            self._apps[id(q)] = applications(q, ev)
        apps = self._apps[id(q)]
        if isinstance(apps, tuple):
            env = {q.var: value}
            try:
                for g in apps:
                    ev.empty_value(g, env)
            except AgentGuardError:
                return True
            return False
        return raises_at_start(q.body, self.registry, self.match, {q.var: value}, ev) is not None

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
        if self.held or self._new_value(call):
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

    def _new_value(self, call: Call) -> bool:
        """Does ``call`` bring a value a probed quantifier has not had (the common step
        has none: one lookup per site of its tool)?"""
        for path, elements, seen, plain in self.tool_sites.get(call.name, self.any_sites):
            args = call.args
            if plain is not None and type(args) is dict and plain in args:
                v = args[plain]
                if (v if type(v) is str or type(v) is int else freeze(v)) not in seen:
                    return True
                continue
            if any(freeze(v) not in seen for v in values_at_site(call, path, elements)):
                return True
        return False

    def _raises(self, name: str, call: Call, nodes: Mapping[str, Any]) -> bool:
        """Did ``call`` make ``name`` raise: a new value its probe or its node saw? The
        node resolves a predicate as an instance is made, for a new value; with none, a
        raise can only come from a predicate that raised nowhere before on the same
        arguments (impure), and is the node's answer."""
        probed = self._probe(name, (call,), True)
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
                and self._probe(name, batch, False) is not True
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
