"""A paused OpenAI Agents run carried to another process with its ``RunState``.

The SDK serializes a run paused for a human's approval (``RunState.to_json``) so that
another process resumes it; the run's firewall goes with it as a document
(:func:`saved_run`): the firewall's own state (counts, stops, executed calls, the log
chain's last line), the ids of the run's calls (how the resumed run is found) and the
tool declarations its spec carried (so the restored spec, and its hash, are the same),
and those declared to it later. :func:`restored_run` reads it back; the log chain
continues in the run's log file. :func:`continued_run` does both at once, in memory: the
next turn of an SDK ``Session`` continues the run its last turn ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from agentguard.enforcement.firewall import Firewall, FirewallStateError
from agentguard.enforcement.options import FirewallOptions
from agentguard.errors import MissingExtraError

from ._json_schema import declaration, with_declarations
from ._openai_agents_run import AgentRun
from ._openai_agents_runs import context_call_ids

try:
    from agents import RunState
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

if TYPE_CHECKING:
    from .openai_agents import OpenAIAgentsGuard

RUN_FORMAT: Final = "agentguard.openai-agents-run/1"


def saved_run(guard: OpenAIAgentsGuard, result_or_state: Any) -> dict[str, Any]:
    """The document of the paused run ``result_or_state`` (a ``RunResult`` with
    interruptions, or its ``RunState``) belongs to."""
    state = result_or_state if isinstance(result_or_state, RunState) else None
    if state is None:
        state = result_or_state.to_state()
    ids = context_call_ids(getattr(state, "_context", None))
    ids.update(str(item.call_id) for item in state.get_interruptions() if item.call_id)
    run = guard.runs.find(ids)
    if run is None:
        raise FirewallStateError("agentguard holds no run of this RunState")
    if run.ended:
        raise FirewallStateError(
            f"the run {run.firewall.run_id} already ended: a run continues only while it is paused"
        )
    return {
        "format": RUN_FORMAT,
        "call_ids": sorted(run.call_ids),
        "claimed": sorted(run.claimed),
        "declared": [[name, guard.declaration_of(name)] for name in run.declared],
        "learned": [[name, guard.declaration_of(name)] for name in run.learned],
        "firewall": run.firewall.save(),
    }


def restored_run(guard: OpenAIAgentsGuard, document: Mapping[str, Any]) -> AgentRun:
    """The run a :func:`saved_run` document holds, its firewall restored (the log chain
    continues in the guard's ``log_path``)."""
    if not isinstance(document, Mapping) or document.get("format") != RUN_FORMAT:
        raise FirewallStateError(f"not an OpenAI Agents run document (expected {RUN_FORMAT})")
    try:
        declared = [(str(name), schema) for name, schema in document["declared"]]
        learned = [(str(name), schema) for name, schema in document["learned"]]
        call_ids = {str(call_id) for call_id in document["call_ids"]}
        claimed = {str(call_id) for call_id in document["claimed"]}
        state = document["firewall"]
    except (KeyError, TypeError, ValueError) as exc:
        raise FirewallStateError(f"malformed OpenAI Agents run document: {exc}") from None
    spec = with_declarations(guard.spec, [declaration(n, s) for n, s in declared])
    options: FirewallOptions = {"keep_trace": True, **guard.firewall_kwargs}
    run = AgentRun(Firewall.restore(spec, state, **options), [n for n, _ in declared])
    run.firewall.declare_tools([declaration(n, s) for n, s in learned])  # not in its state
    run.learned.extend(n for n, _ in learned)
    run.call_ids.update(call_ids)
    run.claimed.update(claimed)
    return run


def continued_run(guard: OpenAIAgentsGuard, previous: AgentRun) -> AgentRun:
    """The run that goes on from ``previous`` (ended): its firewall restored from its
    state (same run id, counts, stops and trace; the log chain continues after its
    finish line), judged on the same declarations, those learned declared again.
    Raises :class:`FirewallStateError` when it cannot be (its log went on elsewhere)."""
    spec = guard.run_spec(list(previous.declared))
    options: FirewallOptions = {"keep_trace": True, **guard.firewall_kwargs}
    run = AgentRun(Firewall.restore(spec, previous.firewall.save(), **options), previous.declared)
    learned = [declaration(name, guard.declaration_of(name)) for name in previous.learned]
    run.firewall.declare_tools(learned)
    run.learned.extend(previous.learned)
    return run


__all__ = ["RUN_FORMAT", "continued_run", "restored_run", "saved_run"]
