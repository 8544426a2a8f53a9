"""The executability oracle: per call, five stages in a fixed order; the first failure fixes FED.

Stages, in tie-break order (:data:`agentguard.pec.labels.LABEL_ORDER`):

1. **schema** - the tool is known and offered at that point; arguments fit its schema;
2. **dependency** - values declared ``from results(tool)`` appeared in an earlier result;
3. **precondition** - the tool's ``requires`` formula holds on the prefix (a hook);
4. **state-consistency** - the environment, replaying from the task's initial state,
   accepts the call (only when an environment is given);
5. **information** - the call's outcome is an error rather than information.

Each stage is a list of :data:`Check` callables; extra checks can be appended to any
stage. Replay stops at the first failing call, whose stage is its one primary label.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.pec.environment import Environment, UserEnvironment, is_error_result
from agentguard.pec.episode import NO_TOOL, Episode, Scored
from agentguard.pec.labels import LABEL_ORDER, Failure, FailureLabel
from agentguard.pec.schema import ToolSchema, ToolSchemas, argument_problem
from agentguard.semantics.evaluator import holds
from agentguard.tools.values import at_path, occurs_in
from agentguard.trace.model import UNKNOWN, Call, Trace


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a check sees: the episode, the call at ``index`` and the accepted prefix before it.

    ``prefix`` holds the earlier calls with the results the replay observed (the
    environment's when there is one, else the recorded ones). ``outcome`` is the
    result of this call; it is known only to the information stage.
    """

    episode: Episode
    index: int
    call: Call
    prefix: Trace
    outcome: Any = UNKNOWN

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

PreconditionHook = Callable[[ToolSchema, Trace], bool]
"""``(declaration, prefix ending with the proposed call) -> requires holds``."""


# ------------------------------------------------------------------ stage checks
def schema_check(tools: ToolSchemas | None, offered: OfferedTools | None = None) -> Check:
    """Tool known and offered; arguments fit (skipped for tools when ``tools`` is None)."""

    def check(ctx: CallContext) -> str | None:
        name = ctx.call.name
        if name == NO_TOOL:
            return None
        allowed = offered(ctx) if offered is not None else None
        if allowed is not None and name not in allowed:
            known = tools is not None and name in tools
            return f"tool {name!r} is {'not offered yet' if known else 'not offered'}"
        if tools is None:
            return None
        schema = tools.get(name)
        if schema is None:
            return f"unknown tool {name!r}"
        return argument_problem(schema, ctx.call.args)

    return check


def dependency_check(tools: ToolSchemas) -> Check:
    """Every ``from results(tool)`` argument value occurs in an earlier result of ``tool``."""

    def check(ctx: CallContext) -> str | None:
        schema = tools.get(ctx.call.name)
        if schema is None:
            return None
        for p in schema.params:
            if p.source is None or p.name not in ctx.call.args:
                continue
            value = ctx.call.args[p.name]
            earlier = [c.result for c in ctx.prefix if c.name == p.source and c.has_result]
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                if not any(occurs_in(v, at_path(r, p.source_path)) for r in earlier):
                    return (
                        f"argument {p.name!r} = {v!r} does not occur in any earlier result "
                        f"of {p.source!r}"
                    )
        return None

    return check


def holds_at_last(decl: ToolSchema, prefix: Trace) -> bool:
    """Default precondition hook: ``decl.requires`` at the last position (the proposed call).

    Evaluated by the AgentLTL core (``agentguard.holds``); ``requires`` formulas are
    past-time, so only the prefix matters.
    """
    if decl.requires is None:
        return True
    return bool(holds(decl.requires, prefix, position=len(prefix) - 1))


def precondition_check(tools: ToolSchemas, hook: PreconditionHook = holds_at_last) -> Check:
    """``requires`` holds on prefix + proposed call; a no-tool end: the task allows it."""

    def check(ctx: CallContext) -> str | None:
        if ctx.call.name == NO_TOOL:
            if ctx.episode.no_tool_allowed:
                return None
            return "the task needs a tool call but the agent finished without one"
        schema = tools.get(ctx.call.name)
        if schema is None or schema.requires is None:
            return None
        proposed = ctx.prefix.append(Call(ctx.call.name, ctx.call.args))
        if hook(schema, proposed):
            return None
        return f"precondition of {ctx.call.name!r} does not hold on the prefix"

    return check


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
        tools: ToolSchemas | None = None,
        offered: OfferedTools | None = None,
        precondition: PreconditionHook = holds_at_last,
        environment: Environment | None = None,
        is_error: Callable[[Any], bool] | None = is_error_result,
        extra: Mapping[FailureLabel, Iterable[Check]] | None = None,
    ) -> Oracle:
        """The standard five-stage pipeline; ``is_error=None`` turns the information stage off."""
        known = tools or {}
        stages: dict[FailureLabel, list[Check]] = {label: [] for label in LABEL_ORDER}
        stages[FailureLabel.SCHEMA].append(schema_check(tools, offered))
        stages[FailureLabel.DEPENDENCY].append(dependency_check(known))
        stages[FailureLabel.PRECONDITION].append(precondition_check(known, precondition))
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
        for index, call in enumerate(episode.actions):
            if env is not None:
                _replay_user_calls(env, episode.user_calls_before(index))
            ctx = CallContext(episode, index, call, prefix)
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
                    CallContext(episode, index, call, prefix, outcome), LABEL_ORDER[3:]
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
    "dependency_check",
    "holds_at_last",
    "information_check",
    "occurs_in",
    "precondition_check",
    "schema_check",
]
