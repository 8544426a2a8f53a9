"""A checkpointed thread continued under a different spec (a policy rollout).

The firewall state a thread carries (``Firewall.save()``) belongs to the spec it was saved
under; ``Firewall.restore`` refuses it under any other. What the middleware does then is
its ``on_spec_change`` option (docs/integrations.md, "Conversations that continue"):

* ``"rejudge"`` (the default): the thread's history is judged again under the new spec.
  The calls the saved state records as executed (the trace itself: results, errors,
  completion order, and the dialogue events the old spec kept) are replayed, in order,
  into a fresh firewall of the new spec: no tool runs again; what the new spec finds in
  them is reported as late violations (a HARD_STOP among them stops the thread);
* ``"restart"``: the run starts afresh under the new spec, nothing replayed;
* ``"error"``: the thread is refused, as before the option existed.

The new run is logged ``agentguard.spec_changed`` (old and new spec hashes, what was
done, how many calls and dialogue events were replayed) before its first line. One shape
is not exact: an old spec that judged tool calls only kept no dialogue events, so a new
spec that judges them gets the conversation's earlier messages read again at the next
model turn, after the replayed calls (see :func:`start_thread_run`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

from agentguard.enforcement.firewall import STATE_FORMAT, Firewall, FirewallStateError
from agentguard.enforcement.options import RecordsAgain
from agentguard.enforcement.prototype import spec_hash
from agentguard.guard import GuardSession
from agentguard.language.ast import Spec
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.trace.model import MESSAGE_NAMES, UNKNOWN

SpecChange = Literal["rejudge", "restart", "error"]
"""What a middleware does with a thread saved under another spec."""

SPEC_CHANGES: Final[tuple[str, ...]] = get_args(SpecChange)

SPEC_CHANGED_EVENT: Final = "agentguard.spec_changed"
"""The log event of a run that continues a thread saved under another spec."""


def check_spec_change(value: str) -> SpecChange:
    """``value`` if it is one of :data:`SPEC_CHANGES`, else a ValueError naming them."""
    for choice in get_args(SpecChange):
        if value == choice:
            chosen: SpecChange = choice
            return chosen
    raise ValueError(f"on_spec_change must be one of {SPEC_CHANGES}, got {value!r}")


def start_thread_run(
    session: GuardSession,
    saved: Any,
    spec: Spec,
    hashes: frozenset[str],
    on_change: SpecChange,
    stale: RecordsAgain,
) -> bool:
    """Start ``session``'s run from the thread's saved state ``saved`` (None: afresh),
    saved under ``spec`` (a state of it carries one of ``hashes``: its meaning's hash, or
    the older hash of its text) or, as ``on_change`` says, another. Specs are compared by
    meaning: a thread saved under the same spec with other comments or layout continues
    as it was (a stop stays a stop).

    True when the conversation must be read again from its first message: the new spec
    judges dialogue events but the old one kept none (it judged tool calls only), so
    the replay has the calls without the messages around them. Read again at the next
    model turn, the earlier messages enter the trace after the replayed calls: their
    order relative to those calls is lost, but no message the new spec judges is."""
    old = _saved_spec_hash(saved)
    if old is None or old in hashes:  # the same spec, or no (well-formed) state
        session.start_run(state=saved, stale=stale)  # the adapter records again what ran
        return False
    new = spec_hash(spec)
    if on_change == "error":
        raise FirewallStateError(
            f"the thread's saved state belongs to a different spec (saved under spec "
            f"{old}, this middleware's is {new}); build the middleware with "
            "on_spec_change='rejudge' to judge the thread's history under the new spec, "
            "or 'restart' to start its trace afresh"
        )
    calls = _executed(saved) if on_change == "rejudge" else []
    session.start_run()
    firewall = session.firewall
    dialogue = sum(1 for c in calls if c["kind"] != "tool")
    reread = bool(calls) and not dialogue and spec_mentions_dialogue(spec)
    _note(
        firewall,
        f"the thread was saved under spec {old}; "
        + (
            f"its {len(calls)} executed call(s) and event(s) are judged again under spec {new}"
            if on_change == "rejudge"
            else f"its trace starts afresh under spec {new}"
        ),
        previous_spec_hash=old,
        on_spec_change=on_change,
        replayed=len(calls) - dialogue,
        replayed_events=dialogue,
        conversation_reread=reread,
    )
    for call in calls:
        _replay(firewall, call)
    return reread


def _saved_spec_hash(saved: Any) -> str | None:
    """The spec hash of a firewall state document (None if ``saved`` is none: a
    malformed one is left to ``Firewall.restore`` and its own error)."""
    if not isinstance(saved, Mapping) or saved.get("format") != STATE_FORMAT:
        return None
    found = saved.get("spec_hash")
    return found if isinstance(found, str) else None


def _executed(saved: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The executed calls and dialogue events a state document records, checked."""
    calls = saved.get("calls")
    if not isinstance(calls, list):
        raise FirewallStateError("malformed firewall state: calls must be a list")
    out: list[dict[str, Any]] = []
    for position, record in enumerate(calls):
        name = record.get("tool_name") if isinstance(record, Mapping) else None
        args = record.get("arguments", {}) if isinstance(record, Mapping) else None
        kind = record.get("kind", "tool") if isinstance(record, Mapping) else None
        if not isinstance(name, str) or not isinstance(args, Mapping):
            raise FirewallStateError(f"malformed firewall state: call {position}")
        if kind != "tool" and (kind not in MESSAGE_NAMES or "text" not in args):
            raise FirewallStateError(f"malformed firewall state: call {position} kind")
        error = record.get("is_error", False)
        result = record.get("tool_result", UNKNOWN)
        out.append(
            {"name": name, "args": dict(args), "kind": kind, "result": result, "error": error}
        )
    return out


def _replay(firewall: Firewall, call: Mapping[str, Any]) -> None:
    """One executed call (or dialogue event) into the new spec's firewall: recorded as
    ran, with its result and error; the violations it reveals are the run's late ones."""
    args = call["args"]
    if call["kind"] != "tool":
        fields = {k: v for k, v in args.items() if k != "text"}
        firewall.observe(call["kind"], args["text"], **fields)
        return
    result = call["result"]
    error = None
    if call["error"]:
        error = result if isinstance(result, str) else "Error"
    firewall.record(call["name"], args, None if result is UNKNOWN else result, error=error)


def _note(firewall: Firewall, message: str, **fields: Any) -> None:
    """Log the spec change in the run's own log (the firewall has no public call for an
    adapter's event: its log is asked directly; a stand-in without one logs nothing)."""
    log = getattr(firewall, "_log", None)
    emit = getattr(log, "emit", None)
    if emit is not None:
        emit(SPEC_CHANGED_EVENT, warn=True, message=message, **fields)


__all__ = [
    "SPEC_CHANGED_EVENT",
    "SPEC_CHANGES",
    "SpecChange",
    "check_spec_change",
    "start_thread_run",
]
