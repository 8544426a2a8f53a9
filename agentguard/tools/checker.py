"""A spec's ``tool`` declarations, checked on a proposed call before it runs.

One checker below the firewall (layer 3, beside scoring and the monitor), so the same checks
serve the firewall, offline tool-use scoring and the PEC oracle. A proposal is checked
for: an undeclared tool, a missing, unexpected, mistyped or out-of-bound argument
(``schema``), a ``from results(tool.path)`` / ``from args(tool.path)`` value that never
appeared earlier (``dependency``), and a ``requires`` formula false at the proposed call
(``requires``, past-time, evaluated on the prefix ending with the call). Each problem is
reported against a synthetic constraint ``tool:<name>:<kind>``; these are checks of the
tool interface, not constraints of the procedure, so they never enter a compliance score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Final, Literal, get_args

from typing_extensions import assert_never

from agentguard.errors import EvaluationError
from agentguard.language import ast as A
from agentguard.semantics.registry import Registry
from agentguard.tools.arguments import article, signature, value_problem
from agentguard.tools.observed import load_index, save_index
from agentguard.tools.precondition import PastFormula, past_formula
from agentguard.tools.values import (
    at_path,
    leaves,
    occurs_in,
    value_key,
)
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.model import Call, Trace

Kind = Literal["schema", "dependency", "requires"]
"""What a tool problem is about: the arguments, a ``from`` source, the precondition."""
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)

RequiresCheck = Callable[[A.Formula, Trace], bool]
"""``(requires formula, prefix ending with the proposed call) -> holds at the last call``."""


@dataclass(frozen=True, slots=True)
class ToolProblem:
    """One way a proposed call breaks its tool's declaration."""

    tool: str
    kind: str  # one of KINDS
    detail: str  # what is wrong, naming the argument and the expected type
    hint: str  # what would fix it
    argument: str | None = None
    error: str = ""  # a user predicate raised while checking (the firewall's policy decides)

    @property
    def constraint(self) -> str:
        """The synthetic constraint name, e.g. ``tool:issue_refund:schema``."""
        return f"tool:{self.tool}:{self.kind}"


def is_tool_check(constraint: str) -> bool:
    """Is this a synthetic ``tool:<name>:<kind>`` constraint rather than a spec's own?"""
    return constraint.startswith("tool:") and constraint.rsplit(":", 1)[-1] in KINDS


@dataclass(frozen=True, eq=False)
class ToolPlan:
    """What a :class:`ToolChecker` derives from its declarations alone, built once.

    A firewall builds a checker per run; the declarations, their parameters, the
    past-time ``requires`` evaluators and the ``from`` sources to index depend only on
    the spec, so a cached plan holds them (the firewall's prototype does) and each
    checker gets only its own indexes and evaluator states (:meth:`ToolChecker.from_plan`).
    ``past`` holds evaluators before any call, never advanced: each checker restarts them.
    """

    tools: MappingProxyType[str, A.ToolDecl]
    implicit: frozenset[str]
    registry: Registry | None
    requires: RequiresCheck
    past: Mapping[str, PastFormula]  # past-time `requires` followed call by call
    params: Mapping[str, Mapping[str, A.Param]]
    trivial: frozenset[str]  # tools a call without arguments always fits
    by_tool: Mapping[str | None, tuple[A.Domain, ...]]  # `from` sources fed by each tool

    @classmethod
    def build(
        cls,
        tools: Iterable[A.ToolDecl],
        *,
        implicit: Iterable[str] = FINAL_TOOLS,
        requires: RequiresCheck | None = None,
        registry: Registry | None = None,
    ) -> ToolPlan:
        """The plan of ``tools`` (see :class:`ToolChecker` for the options)."""
        decls = {t.name: t for t in tools}
        past: dict[str, PastFormula] = {}
        if requires is None:
            for decl in decls.values():
                found = past_formula(decl.requires) if decl.requires is not None else None
                if found is not None:
                    past[decl.name] = found
        by_tool: dict[str | None, list[A.Domain]] = {}
        seen: set[A.Domain] = set()
        for decl in decls.values():
            for p in decl.params:
                src = p.source
                if src is not None and src.extractor in ("results", "args"):
                    key = A.Domain(src.extractor, src.tool, tuple(src.path))
                    if key not in seen:
                        seen.add(key)
                        by_tool.setdefault(src.tool, []).append(key)
        return cls(
            tools=MappingProxyType(decls),
            implicit=frozenset(implicit),
            registry=registry,
            requires=requires or _holds_at_last(registry),
            past=MappingProxyType(past),
            params=MappingProxyType(
                {
                    name: MappingProxyType({p.name: p for p in decl.params})
                    for name, decl in decls.items()
                }
            ),
            trivial=frozenset(
                name
                for name, decl in decls.items()
                if decl.requires is None
                and all(p.optional and p.source is None for p in decl.params)
            ),
            by_tool=MappingProxyType({t: tuple(ds) for t, ds in by_tool.items()}),
        )


class ToolChecker:
    """Checks proposed calls against ``tool`` declarations (see the module docstring).

    ``implicit`` tools (the firewall's final tools) are accepted without a declaration;
    ``requires`` is the precondition evaluator (default: the offline evaluator at the
    last position of the prefix).
    """

    def __init__(
        self,
        tools: Iterable[A.ToolDecl],
        *,
        implicit: Iterable[str] = FINAL_TOOLS,
        requires: RequiresCheck | None = None,
        registry: Registry | None = None,
    ) -> None:
        self._start(ToolPlan.build(tools, implicit=implicit, requires=requires, registry=registry))

    @classmethod
    def from_plan(cls, plan: ToolPlan) -> ToolChecker:
        """A checker of ``plan``'s declarations with nothing observed yet."""
        checker = cls.__new__(cls)
        checker._start(plan)
        return checker

    def _start(self, plan: ToolPlan) -> None:
        self.plan = plan
        self.tools: dict[str, A.ToolDecl] = plan.tools.copy()
        self.implicit = plan.implicit
        self.registry = plan.registry
        self._requires = plan.requires
        self._past: dict[str, PastFormula] = {n: p.restarted() for n, p in plan.past.items()}
        self._params: Mapping[str, Mapping[str, A.Param]] = plan.params
        self._trivial = plan.trivial
        # values seen so far at each declared `from` source, fed by observe()
        self._by_tool = plan.by_tool
        self._index: dict[A.Domain, set[Any]] = {
            src: set() for sources in plan.by_tool.values() for src in sources
        }

    @property
    def observes(self) -> bool:
        """Does :meth:`observe` keep anything (a past-time ``requires`` or a ``from``
        source)? Else the firewall need not hand it the executed calls."""
        return bool(self._past or self._by_tool)

    def observe(self, call: Call) -> None:
        """Index an executed call (with its result) for the ``from`` dependency checks."""
        for past in self._past.values():
            past.advance(call)
        if not self._by_tool:
            return
        for tool in (call.name, None):
            for src in self._by_tool.get(tool, ()):
                if src.extractor == "results":
                    if not call.has_result:
                        continue
                    data = at_path(call.result, src.path)
                else:
                    data = at_path(call.args, src.path)
                if data is None:
                    continue
                seen = self._index[src]
                for leaf in leaves(data):
                    key = value_key(leaf)
                    if key is not None:
                        seen.add(key)

    def observed(self) -> list[list[Any]]:
        """The values seen at each ``from`` source, for a saved state (tools/observed.py)."""
        return save_index(self._index)

    def restore_observed(self, saved: Sequence[Any]) -> None:
        """Take the values :meth:`observed` saved, into this checker with nothing seen."""
        load_index(self._index, saved)

    @property
    def enabled(self) -> bool:
        """Only a spec that declares tools is checked."""
        return bool(self.tools)

    def declare(self, found: Iterable[A.ToolDecl]) -> None:
        """Declare tools learned while the checks run (an MCP server's tools, listed
        again after ``tools/list_changed``): from the next call each is checked like a
        declared one. A tool the plan declares (the spec's own line) keeps that
        declaration; one learned before is replaced (its server changed the schema).
        Learned declarations check arguments only: a ``from`` source or ``requires``
        would begin mid-run with nothing observed, so they are dropped."""
        learned = {
            d.name: A.ToolDecl(
                d.name,
                tuple(replace(p, source=None) for p in d.params),
                allow_extra=d.allow_extra,
            )
            for d in found
            if d.name not in self.plan.tools
        }
        if not learned:
            return
        self.tools.update(learned)
        params = {n: MappingProxyType({p.name: p for p in d.params}) for n, d in learned.items()}
        self._params = {**self._params, **params}
        fits_bare = {n for n, d in learned.items() if all(p.optional for p in d.params)}
        self._trivial = (self._trivial - learned.keys()) | fits_bare

    def check(
        self,
        name: str,
        args: Mapping[str, Any],
        history: Sequence[Call],
        inflight: Sequence[Call] = (),
    ) -> list[ToolProblem]:
        """Every problem of ``name(args)`` (empty: the call fits).

        ``history`` are the executed calls (each passed to :meth:`observe` already),
        ``inflight`` the calls allowed before this one whose results are not known yet.
        """
        if not self.tools or (not args and name in self._trivial):
            return []
        decl = self.tools.get(name)
        if decl is None:
            if name in self.implicit:  # a final tool, unless the spec declares it
                return []
            return [
                ToolProblem(
                    name,
                    "schema",
                    f"unknown tool {name!r}: the spec declares {', '.join(sorted(self.tools))}",
                    f"call one of the declared tools ({', '.join(sorted(self.tools))})",
                )
            ]
        problems = self._schema(decl, args)
        if not problems:  # a dependency or precondition on malformed arguments says little
            problems.extend(self._dependencies(decl, args, inflight))
            if decl.requires is not None:
                problems.extend(self._precondition(decl, args, history, inflight))
        return problems

    def check_kind(
        self,
        kind: Kind,
        name: str,
        args: Mapping[str, Any],
        history: Sequence[Call],
        inflight: Sequence[Call] = (),
    ) -> list[ToolProblem]:
        """The problems of one ``kind`` (one of :data:`KINDS`) of ``name(args)``.

        For a caller that runs the kinds as separate stages (the PEC oracle: schema, then
        dependency, then precondition); unlike :meth:`check`, a dependency or precondition
        is checked whatever the schema stage found, as the caller decides the order.
        """
        if not self.tools or (not args and name in self._trivial):
            return []
        decl = self.tools.get(name)
        if decl is None:
            return self.check(name, args, history, inflight) if kind == "schema" else []
        if kind == "schema":
            return self._schema(decl, args)
        if kind == "dependency":
            return self._dependencies(decl, args, inflight)
        if kind == "requires":
            if decl.requires is None:
                return []
            return self._precondition(decl, args, history, inflight)
        assert_never(kind)

    # ------------------------------------------------------------------ schema
    def _schema(self, decl: A.ToolDecl, args: Mapping[str, Any]) -> list[ToolProblem]:
        out = []
        params = self._params[decl.name]
        for required in decl.params:
            if not required.optional and required.name not in args:
                out.append(
                    ToolProblem(
                        decl.name,
                        "schema",
                        f"missing required argument {required.name!r} ({article(required.type)})",
                        f"pass {required.name} ({article(required.type)}): {signature(decl)}",
                        required.name,
                    )
                )
        for key, value in args.items():
            p = params.get(key)
            if p is None:
                if decl.allow_extra:
                    continue
                out.append(
                    ToolProblem(
                        decl.name,
                        "schema",
                        f"unexpected argument {key!r}",
                        f"remove {key}: {signature(decl)}",
                        key,
                    )
                )
                continue
            if value is None and p.optional:
                continue
            problem = value_problem(p, value)
            if problem is not None:
                out.append(ToolProblem(decl.name, "schema", *problem, key))
        return out

    # ------------------------------------------------------------------ dependencies
    def _dependencies(
        self, decl: A.ToolDecl, args: Mapping[str, Any], inflight: Sequence[Call]
    ) -> list[ToolProblem]:
        out = []
        for p in decl.params:
            src = p.source
            if src is None or p.name not in args or src.extractor not in ("results", "args"):
                continue  # user extractors are not checked before the call
            value = args[p.name]
            if value is None and p.optional:
                continue
            from_results = src.extractor == "results"
            seen = self._index[A.Domain(src.extractor, src.tool, tuple(src.path))]
            pending = (
                []
                if from_results
                else [at_path(c.args, src.path) for c in inflight if src.tool in (None, c.name)]
            )
            for v in value if isinstance(value, (list, tuple)) else [value]:
                if value_key(v) in seen or any(occurs_in(v, d) for d in pending):
                    continue
                where = f"{src.tool or 'any tool'}{'.' if src.path else ''}"
                where += ".".join(str(x) for x in src.path)
                what = "result" if from_results else "call's arguments"
                out.append(
                    ToolProblem(
                        decl.name,
                        "dependency",
                        f"argument {p.name!r} = {v!r:.60} never appeared in an earlier "
                        f"{what} of {where} (declared from {src.extractor}({where}))",
                        f"call {src.tool or 'the source tool'} first and pass as {p.name} a "
                        f"value taken from its {'results' if from_results else 'arguments'}",
                        p.name,
                    )
                )
                break
        return out

    # ------------------------------------------------------------------ precondition
    def _precondition(
        self,
        decl: A.ToolDecl,
        args: Mapping[str, Any],
        history: Sequence[Call],
        inflight: Sequence[Call],
    ) -> list[ToolProblem]:
        if decl.requires is None:  # pragma: no cover - the caller checks
            return []
        proposed = Call(decl.name, dict(args), position=len(history) + len(inflight))
        past = self._past.get(decl.name)
        if past is not None and past.holds_at([*inflight, proposed]):
            return []
        calls = tuple(c.at(i) for i, c in enumerate([*history, *inflight]))
        trace = Trace((*calls, proposed))
        from agentguard.language import printer

        text = printer.formula(decl.requires)
        if past is None:
            try:
                if self._requires(decl.requires, trace):
                    return []
            except EvaluationError as exc:  # a user predicate raised, or is not registered
                return [
                    ToolProblem(
                        decl.name,
                        "requires",
                        f"the precondition of {decl.name} ({text}) could not be evaluated: {exc}",
                        f"fix the predicate behind `{text}`",
                        error=str(exc),
                    )
                ]
        return [
            ToolProblem(
                decl.name,
                "requires",
                f"the precondition of {decl.name} ({text}) does not hold",
                requires_hint(decl, trace) or f"make `{text}` hold before calling {decl.name}",
            )
        ]


def _holds_at_last(registry: Registry | None) -> RequiresCheck:
    """The offline evaluator at the last position, with the spec's predicate registry."""

    def check(formula: A.Formula, trace: Trace) -> bool:
        from agentguard.semantics.evaluator import holds

        return holds(formula, trace, registry=registry, position=len(trace) - 1)

    return check


def requires_hint(decl: A.ToolDecl, trace: Trace) -> str:
    """The monitor's repair hint for ``G(tool -> requires)`` before the last call, if any."""
    if decl.requires is None:
        return ""
    from agentguard.errors import AgentGuardError
    from agentguard.monitor import Monitor

    formula = A.Always(A.Implies(A.Event(decl.name), decl.requires), None)
    try:
        m = Monitor([A.Constraint("requires", formula)])
        for c in trace.calls[:-1]:
            m.advance(c)
        return m.hint("requires", trace.calls[-1])
    except AgentGuardError:
        return ""
