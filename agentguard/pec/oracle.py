"""The executability oracle: per call, five stages in a fixed order; the first failure fixes FED.

Stages, in tie-break order (:data:`agentguard.pec.labels.LABEL_ORDER`):

1. **schema** - the tool is known and offered at that point; arguments fit its declaration;
2. **dependency** - values declared ``from results(tool)`` (``from args(tool)``) appeared in
   an earlier result (call);
3. **precondition** - the tool's ``requires`` formula holds on the prefix (a hook);
4. **state-consistency** - the environment, replaying from the task's initial state,
   accepts the call (only when an environment is given);
5. **information** - the call's outcome is an error rather than information.

Stages 1-3 ask the firewall's own tool checker (:class:`ToolChecks` over
:class:`agentguard.tools.ToolChecker`) about the language's tool declarations (loaded by
:mod:`agentguard.pec.declarations`). Each stage is a list of :data:`Check` callables; extra
checks can be appended to any stage. Replay stops at the first failing call, whose stage is its one primary label.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.errors import EvaluationError
from agentguard.language.ast import ToolDecl
from agentguard.pec.declarations import ToolDecls
from agentguard.pec.environment import Environment, UserEnvironment, is_error_result
from agentguard.pec.episode import NO_TOOL, Episode, Scored
from agentguard.pec.labels import LABEL_ORDER, Failure, FailureLabel
from agentguard.semantics.evaluator import holds
from agentguard.tools.checker import Kind, ToolChecker, ToolProblem
from agentguard.trace.model import UNKNOWN, Call, Trace


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a check sees: the episode, the call at ``index`` and the accepted prefix before it.

    ``prefix`` holds the earlier calls with the results the replay observed (the
    environment's when there is one, else the recorded ones). ``outcome`` is the
    result of this call; it is known only to the information stage. ``replay`` is
    state a check keeps across the calls of one replay (one dict per replay, so an
    oracle reused across episodes or threads carries none of it over).
    """

    episode: Episode
    index: int
    call: Call
    prefix: Trace
    outcome: Any = UNKNOWN
    replay: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def depth(self) -> int:
        """``k`` of the prefix this call completes (1-based)."""
        return self.index + 1

    @property
    def turn(self) -> int:
        return 0 if self.call.name == NO_TOOL else self.episode.turn_of(self.index)


Check = Callable[[CallContext], "Failure | str | None"]
"""A stage check: None when the call passes, else the reason (or a ready Failure)."""

OfferedTools = Callable[[CallContext], "Collection[str] | None"]
"""Tools offered at a call (None = every known tool); e.g. BFCL's held-out functions."""

PreconditionHook = Callable[[ToolDecl, Trace], bool]
"""``(declaration, prefix ending with the proposed call) -> requires holds``."""


# ------------------------------------------------------------------ stage checks
def offered_check(offered: OfferedTools, tools: ToolDecls | None = None) -> Check:
    """The tool is offered at this call (``tools``, the known ones, word the reason)."""

    def check(ctx: CallContext) -> str | None:
        name = ctx.call.name
        allowed = offered(ctx) if name != NO_TOOL else None
        if allowed is None or name in allowed:
            return None
        known = tools is not None and name in tools
        return f"tool {name!r} is {'not offered yet' if known else 'not offered'}"

    return check


class ToolChecks:
    """The schema, dependency and precondition stages of declared tools.

    All three ask the one tool checker (:class:`agentguard.tools.ToolChecker`, the
    firewall's and offline scoring's), so a call fits here exactly when it fits there.
    Each replay gets its own checker, fed the accepted calls with the results the replay
    observed: ``from`` sources and past-time ``requires`` formulas follow the prefix
    incrementally. ``precondition`` replaces the checker's evaluation of ``requires``
    (default: the AgentLTL core at the proposed call). A precondition that cannot be
    evaluated (a user predicate raised or is not registered) raises
    :class:`~agentguard.errors.EvaluationError` rather than labelling the call.
    """

    def __init__(self, tools: ToolDecls, precondition: PreconditionHook | None = None) -> None:
        self.tools: dict[str, ToolDecl] = dict(tools)
        self.precondition = precondition

    def schema(self, ctx: CallContext) -> str | None:
        """The tool is declared and its arguments fit the declaration."""
        name = ctx.call.name
        if name == NO_TOOL:
            return None
        if name not in self.tools:
            return f"unknown tool {name!r}"
        return self._reason("schema", ctx)

    def dependency(self, ctx: CallContext) -> str | None:
        """Every ``from results(...)`` / ``from args(...)`` value appeared earlier."""
        return self._reason("dependency", ctx)

    def requires(self, ctx: CallContext) -> str | None:
        """The tool's ``requires`` holds on the prefix plus the proposed call."""
        problem = self._problem("requires", ctx)
        if problem is not None and problem.error:
            raise EvaluationError(f"call {ctx.depth} {ctx.call.name!r}: {problem.detail}")
        return None if problem is None else problem.detail

    def _reason(self, kind: Kind, ctx: CallContext) -> str | None:
        problem = self._problem(kind, ctx)
        return None if problem is None else problem.detail

    def _problem(self, kind: Kind, ctx: CallContext) -> ToolProblem | None:
        if ctx.call.name not in self.tools:
            return None
        found = self._checker(ctx).check_kind(kind, ctx.call.name, ctx.call.args, ctx.prefix.calls)
        return found[0] if found else None

    def _checker(self, ctx: CallContext) -> ToolChecker:
        """This replay's checker, fed every accepted call of ``ctx.prefix``."""
        fed: _FedChecker | None = ctx.replay.get(self)
        if fed is None or fed.count > len(ctx.prefix):
            fed = _FedChecker(self._new_checker())
            ctx.replay[self] = fed
        for call in ctx.prefix.calls[fed.count :]:
            fed.checker.observe(call)
        fed.count = len(ctx.prefix)
        return fed.checker

    def _new_checker(self) -> ToolChecker:
        hook = self.precondition
        if hook is None:
            return ToolChecker(self.tools.values(), implicit=())
        tools = self.tools

        def requires(_formula: Any, trace: Trace) -> bool:
            return hook(tools[trace.calls[-1].name], trace)

        return ToolChecker(tools.values(), implicit=(), requires=requires)


@dataclass(slots=True)
class _FedChecker:
    checker: ToolChecker
    count: int = 0  # calls of the prefix observed so far


def holds_at_last(decl: ToolDecl, prefix: Trace) -> bool:
    """A precondition hook: ``decl.requires`` at the last position (the proposed call).

    Evaluated by the AgentLTL core (``agentguard.holds``) on the whole prefix; the
    default (no hook) gives the same verdicts incrementally.
    """
    if decl.requires is None:
        return True
    return bool(holds(decl.requires, prefix, position=len(prefix) - 1))


def no_tool_check(ctx: CallContext) -> str | None:
    """An episode that ends without any tool call is executable only if its task allows it."""
    if ctx.call.name != NO_TOOL or ctx.episode.no_tool_allowed:
        return None
    return "the task needs a tool call but the agent finished without one"


def information_check(is_error: Callable[[Any], bool] = is_error_result) -> Check:
    """The call's outcome (replayed, else recorded) is an error instead of information."""

    def check(ctx: CallContext) -> str | None:
        if ctx.call.name == NO_TOOL or ctx.outcome is UNKNOWN:
            return None
        recorded_error = ctx.call.error and ctx.outcome is ctx.call.result  # not replayed
        if recorded_error or is_error(ctx.outcome):
            return f"outcome is an error: {str(ctx.outcome)[:160]}"
        return None

    return check


# ------------------------------------------------------------------------ oracle
@dataclass(frozen=True, slots=True)
class Replay:
    """The verdict on one episode plus the replayed prefix (for inspection and tests)."""

    scored: Scored
    prefix: Trace

    @property
    def failure(self) -> Failure | None:
        return self.scored.failure


@dataclass(frozen=True, slots=True)
class Oracle:
    """A per-call pipeline; build it with :meth:`build` or pass the stage lists directly."""

    stages: Mapping[FailureLabel, tuple[Check, ...]] = field(default_factory=dict)
    environment: Environment | None = None

    @classmethod
    def build(
        cls,
        *,
        tools: ToolDecls | None = None,
        offered: OfferedTools | None = None,
        precondition: PreconditionHook | None = None,
        environment: Environment | None = None,
        is_error: Callable[[Any], bool] | None = is_error_result,
        extra: Mapping[FailureLabel, Iterable[Check]] | None = None,
    ) -> Oracle:
        """The standard five-stage pipeline; ``is_error=None`` turns the information stage off.

        ``tools=None`` checks no tool (only ``offered``); an empty mapping knows no tool.
        """
        stages: dict[FailureLabel, list[Check]] = {label: [] for label in LABEL_ORDER}
        if offered is not None:
            stages[FailureLabel.SCHEMA].append(offered_check(offered, tools))
        stages[FailureLabel.PRECONDITION].append(no_tool_check)
        if tools is not None:
            declared = ToolChecks(tools, precondition)
            stages[FailureLabel.SCHEMA].append(declared.schema)
            stages[FailureLabel.DEPENDENCY].append(declared.dependency)
            stages[FailureLabel.PRECONDITION].append(declared.requires)
        if is_error is not None:
            stages[FailureLabel.INFORMATION].append(information_check(is_error))
        for label, checks in (extra or {}).items():
            stages[label].extend(checks)
        return cls({label: tuple(checks) for label, checks in stages.items()}, environment)

    def replay(self, episode: Episode) -> Replay:
        """Run the checks call by call from the task's initial state; stop at the first failure."""
        env = self.environment
        if env is not None:
            env.reset(episode.task_id)
        try:
            return self._replay(episode, env)
        finally:
            if env is not None:
                env.close()

    def score(self, episode: Episode) -> Scored:
        return self.replay(episode).scored

    def _replay(self, episode: Episode, env: Environment | None) -> Replay:
        prefix = Trace()
        state: dict[object, Any] = {}  # the checks' state for this replay
        for index, call in enumerate(episode.actions):
            if env is not None:
                _replay_user_calls(env, episode.user_calls_before(index))
            ctx = CallContext(episode, index, call, prefix, replay=state)
            failure = self._run(ctx, LABEL_ORDER[:3])
            outcome = call.result
            if failure is None and env is not None and call.name != NO_TOOL:
                accepted, outcome = env.execute(call)
                if not accepted:
                    failure = Failure(
                        FailureLabel.STATE, f"environment rejected the call: {str(outcome)[:160]}"
                    )
            if failure is None:
                failure = self._run(
                    CallContext(episode, index, call, prefix, outcome, state), LABEL_ORDER[3:]
                )
            if failure is not None:
                where = f"call {index + 1} {call.name!r}: "
                failed = Failure(failure.label, where + failure.reason)
                return Replay(Scored(episode, index + 1, failed), prefix)
            prefix = prefix.append(call.with_result(outcome))
        return Replay(Scored(episode, episode.horizon + 1), prefix)

    def _run(self, ctx: CallContext, labels: Sequence[FailureLabel]) -> Failure | None:
        for label in labels:
            for check in self.stages.get(label, ()):
                verdict = check(ctx)
                if verdict is None:
                    continue
                return verdict if isinstance(verdict, Failure) else Failure(label, verdict)
        return None


def _replay_user_calls(env: Environment, calls: Sequence[Call]) -> None:
    """Run the simulated user's calls so the state is the one the agent acted in."""
    for call in calls:
        if isinstance(env, UserEnvironment):
            env.execute_user(call)
        else:
            env.execute(call)


__all__ = [
    "CallContext",
    "Check",
    "OfferedTools",
    "Oracle",
    "PreconditionHook",
    "Replay",
    "ToolChecks",
    "holds_at_last",
    "information_check",
    "no_tool_check",
    "offered_check",
]
