"""Episodes: one rollout each (task id, free labels, predicted calls, final success ``Y``).

An agent that ends a tool-use task before any call still has one evaluated action
slot: the terminal no-tool action (``T = 1``, paper §2.2). :attr:`Episode.actions`
materialises it as a :class:`Call` named :data:`NO_TOOL`, executable only when the
task allows finishing without tools (:attr:`Episode.no_tool_allowed`).

Calls made by someone other than the agent (tau2's simulated user acting on their
own phone) are :attr:`Episode.user_calls`: they are replayed, in place, so the
environment's state is what the agent saw, but they are not the agent's actions:
they never count toward ``T`` and are never judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from agentguard.errors import TraceRecordError
from agentguard.pec.errors import PecError
from agentguard.pec.labels import Failure
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Call, Trace

NO_TOOL: Final = "<no-tool>"
"""Name of the terminal no-tool action that stands for an episode without calls."""


@dataclass(frozen=True, slots=True)
class Episode:
    """One rollout as recorded; its executability is judged separately (see :class:`Scored`)."""

    task_id: str
    calls: tuple[Call, ...]
    success: bool
    labels: Mapping[str, str] = field(default_factory=dict)
    turns: tuple[int, ...] | None = None
    """Turn index of each call in multi-turn benchmarks (decides which tools are offered)."""
    no_tool_allowed: bool = False
    """Whether the task may be finished without any tool call (decides the ``T = 1`` case)."""
    user_calls: tuple[tuple[int, Call], ...] = ()
    """Calls by the simulated user, each with how many agent calls came before it."""

    def __post_init__(self) -> None:
        if any(not c.is_tool for c in self.calls):
            raise PecError(
                f"episode {self.task_id!r}: a dialogue event is not a tool action "
                "(drop messages first: Trace.without_messages)"
            )
        calls = tuple(c if c.position == i else c.at(i) for i, c in enumerate(self.calls))
        object.__setattr__(self, "calls", calls)
        object.__setattr__(self, "labels", {str(k): str(v) for k, v in self.labels.items()})
        if self.turns is not None and len(self.turns) != len(calls):
            raise PecError(
                f"episode {self.task_id!r}: {len(self.turns)} turn indices for {len(calls)} calls"
            )
        if any(not 0 <= before <= len(calls) for before, _ in self.user_calls):
            raise PecError(f"episode {self.task_id!r}: a user call is placed outside 0..T")

    @property
    def is_no_tool(self) -> bool:
        """True when the agent finished before calling any tool."""
        return not self.calls

    @property
    def actions(self) -> tuple[Call, ...]:
        """The evaluated action slots ``a_1..a_T``: the calls, or the one no-tool action."""
        return self.calls if self.calls else (Call(NO_TOOL, {}, None, 0),)

    @property
    def horizon(self) -> int:
        """``T_i >= 1``."""
        return max(len(self.calls), 1)

    @property
    def trace(self) -> Trace:
        return Trace(self.calls)

    def turn_of(self, index: int) -> int:
        """Turn of call ``index`` (0 when the episode is single-turn)."""
        return 0 if self.turns is None else self.turns[index]

    def user_calls_before(self, index: int) -> tuple[Call, ...]:
        """The user's calls made after agent call ``index - 1`` and before call ``index``."""
        return tuple(call for before, call in self.user_calls if before == index)

    def label(self, key: str) -> str:
        """A free label such as ``method``; missing labels read as ``"-"``."""
        return self.labels.get(key, "-")


@dataclass(frozen=True, slots=True)
class Scored:
    """An episode with its first-error depth and (when it failed) the primary failure label."""

    episode: Episode
    fed: int
    failure: Failure | None = None

    def __post_init__(self) -> None:
        horizon = self.episode.horizon
        if not 1 <= self.fed <= horizon + 1:
            raise PecError(
                f"episode {self.episode.task_id!r}: FED {self.fed} outside "
                f"1..T+1 = 1..{horizon + 1}"
            )
        if self.fed == horizon + 1 and self.failure is not None:
            raise PecError(
                f"episode {self.episode.task_id!r}: fully executable (FED = T+1) but labelled "
                f"{self.failure.label.value!r}"
            )

    @property
    def executable(self) -> bool:
        """The whole trajectory is executable (``FED = T + 1``)."""
        return self.fed == self.episode.horizon + 1


def episode_from_trace(
    trace: Trace,
    *,
    task_id: str,
    success: bool,
    labels: Mapping[str, str] | None = None,
    no_tool_allowed: bool = False,
) -> Episode:
    """An episode from an agentguard run trace (e.g. ``Firewall.trace``), final answer excluded.

    A ``final_answer`` call is how integrations record the end of a run; it is not
    a tool action, so it does not count toward ``T``; nor does a dialogue event (a user
    or assistant message).
    """
    calls = tuple(c for c in trace.calls if c.is_tool and c.name != FINAL_TOOL)
    return Episode(task_id, calls, success, dict(labels or {}), None, no_tool_allowed)


@dataclass(frozen=True, slots=True)
class LoadedEpisode:
    """One record of an episode file: the episode, its recorded verdict if any, or the error."""

    source: str
    record: int
    episode: Episode | None
    scored: Scored | None
    error: TraceRecordError | None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.record}"


__all__ = ["NO_TOOL", "Episode", "LoadedEpisode", "Scored", "episode_from_trace"]
