"""Guard an AgentDojo agent pipeline (agentdojo 0.1.35): run AgentDojo's benchmark with
the firewall on.

::

    from agentguard.integrations.agentdojo import guard_pipeline

    guarded = guard_pipeline(pipeline, "specs/agentdojo/banking.ltl", log_path="decisions.jsonl")
    benchmark_suite_with_injections(guarded, suite, attack, logdir, force_rerun=True)

:func:`guard_pipeline` returns an :class:`AgentGuardPipeline` wrapping ``pipeline`` (same
``name``, which AgentDojo's attacks and log paths read), in which every ``ToolsExecutor``
(at the top or inside a ``ToolsExecutionLoop``) is replaced by a
:class:`~agentguard.integrations._agentdojo_executor.GuardedToolsExecutor` keeping its
output formatter; the pipeline given is not changed. A pipeline with no ``ToolsExecutor``
runs its tools where agentguard cannot gate them and is refused.

One firewall per task run: each ``query`` (AgentDojo runs a task with one) starts a run
of a new :class:`~agentguard.guard.GuardSession`, and ends it when the query returns or
raises. Inside it:

* every message of the run is observed as a dialogue event, in order, as the run-file
  reader (format ``agentdojo``) makes them: the user's prompt as ``user_message``, each
  assistant message as ``assistant_message`` (text and number of tool calls);
* every model tool call is proposed before it runs, with the arguments the tool will
  receive, and run with ``decision.arguments()``; its result is recorded as the value the
  model's text encodes (see the executor);
* the final answer (the last assistant message, with text and no tool call) is proposed
  as ``final_answer(answer=...)``: allowed, it is recorded; refused, the run ends with
  agentguard's refusal as the last assistant message (the model's answer stays before it,
  and AgentDojo scores the refusal as the output).

So the firewall's report equals ``verify_trace`` of the run file AgentDojo writes, read
back (online = offline). ``guarded.agentguard`` is the :class:`AgentDojoGuard`:
``.last`` (the last run's session), ``.report``, ``.trace``, ``.attempts``; pass
``on_run=`` to see every run's session as it ends.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Unpack

from agentguard.enforcement.decision import RunStopped
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession, UnsupportedAgentError
from agentguard.guard_shared import GuardOptions, blocked_text
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.formats.agentdojo import final_text
from agentguard.trace.model import Trace

from ._agentdojo_executor import CURRENT_RUN, GuardedToolsExecutor, RunState

try:
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.agent_pipeline.tool_execution import ToolsExecutionLoop, ToolsExecutor
    from agentdojo.functions_runtime import EmptyEnv, FunctionsRuntime
    from agentdojo.logging import Logger
    from agentdojo.types import ChatAssistantMessage, text_content_block_from_string
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("agentdojo", "agentdojo") from exc

RunListener = Callable[[GuardSession], None]
"""Called with each task run's session once the run is finished."""


class AgentDojoGuard:
    """The guard state of a guarded pipeline: the spec, the options, the last run."""

    def __init__(
        self, spec: SpecLike, *, on_run: RunListener | None = None, **options: Unpack[GuardOptions]
    ) -> None:
        self.spec = coerce_spec(spec, options.get("registry"))
        self.options: GuardOptions = options
        self.on_run = on_run
        self.last: GuardSession | None = None

    def new_run(self) -> GuardSession:
        """A session for one task run, its run started."""
        session = GuardSession(self.spec, **self.options)
        session.start_run()
        return session

    def ended(self, session: GuardSession) -> None:
        self.last = session
        if self.on_run is not None:
            self.on_run(session)

    @property
    def report(self) -> FirewallReport | None:
        return None if self.last is None else self.last.report

    @property
    def trace(self) -> Trace:
        return Trace() if self.last is None else self.last.trace

    @property
    def attempts(self) -> list[Any]:
        return [] if self.last is None else list(self.last.attempts)


class AgentGuardPipeline(BasePipelineElement):  # type: ignore[misc]  # agentdojo is untyped
    """An AgentDojo pipeline whose tool calls are checked (see the module docstring)."""

    def __init__(self, pipeline: BasePipelineElement, guard: AgentDojoGuard) -> None:
        self.pipeline = _guarded(pipeline)
        self.name = pipeline.name
        self.agentguard = guard

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Any = EmptyEnv(),  # noqa: B008 - AgentDojo's own signature
        messages: Sequence[Any] = [],
        extra_args: dict[str, Any] = {},  # noqa: B006 - AgentDojo's own signature
    ) -> tuple[str, FunctionsRuntime, Any, Sequence[Any], dict[str, Any]]:
        session = self.agentguard.new_run()
        run = RunState(session)
        token = CURRENT_RUN.set(run)
        try:
            query, runtime, env, out, extra_args = self.pipeline.query(
                query, runtime, env, messages, extra_args
            )
            out = _finish(run, list(out))
        finally:
            CURRENT_RUN.reset(token)
            session.finish_run()
            self.agentguard.ended(session)
        return query, runtime, env, out, extra_args


def _finish(run: RunState, messages: list[Any]) -> list[Any]:
    """The run's last messages observed and its final answer proposed; the messages, with
    agentguard's refusal appended when the answer is refused."""
    session = run.session
    with contextlib.suppress(RunStopped):  # the final answer is then refused
        run.observe_through(messages)
    answer = final_text(messages)
    if answer is None:
        return messages
    decision = session.propose(FINAL_TOOL, {"answer": answer})
    if decision.executes:
        decision = session.start(decision)
    if decision.executes:
        with contextlib.suppress(RunStopped):  # the run ends here either way
            session.complete(decision, answer)
        return messages
    note = ChatAssistantMessage(
        role="assistant",
        content=[text_content_block_from_string(blocked_text(decision))],
        tool_calls=None,
    )
    out = [*messages, note]
    run.observed = len(out)
    Logger().get().log(out)  # the runner logs nothing after the pipeline returns
    return out


def _guarded(element: Any) -> Any:
    """``element`` with each ``ToolsExecutor`` in it replaced by a guarded one (copies:
    the caller's pipeline is left as it was); refused when there is none."""
    found: list[int] = []
    out = _replace(element, found)
    if not found:
        raise UnsupportedAgentError(
            "this AgentDojo pipeline has no ToolsExecutor (at the top or in a "
            "ToolsExecutionLoop): its tools run where agentguard cannot check them"
        )
    return out


def _replace(element: Any, found: list[int]) -> Any:
    if isinstance(element, GuardedToolsExecutor):
        found.append(1)
        return element
    if isinstance(element, ToolsExecutor):
        found.append(1)
        return GuardedToolsExecutor(element.output_formatter)
    inner = getattr(element, "elements", None)
    if isinstance(inner, (list, tuple)) and (
        isinstance(element, ToolsExecutionLoop) or hasattr(element, "query")
    ):
        replaced = [_replace(e, found) for e in inner]
        if all(a is b for a, b in zip(replaced, inner, strict=True)):
            return element
        clone = copy.copy(element)
        clone.elements = type(inner)(replaced)
        return clone
    return element


def guard_pipeline(
    pipeline: BasePipelineElement,
    spec: SpecLike,
    *,
    on_run: RunListener | None = None,
    **options: Unpack[GuardOptions],
) -> AgentGuardPipeline:
    """``pipeline`` with the firewall on (see the module docstring); ``options`` are the
    firewall's and the session's, as for :func:`agentguard.guard`."""
    return AgentGuardPipeline(pipeline, AgentDojoGuard(spec, on_run=on_run, **options))


__all__ = ["AgentDojoGuard", "AgentGuardPipeline", "RunListener", "guard_pipeline"]
