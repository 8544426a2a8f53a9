"""Which batch decision a call collects: a framework proposes a parallel batch once
(:meth:`GuardSession.propose_batch`), then runs each call on its own, often in a worker
thread and without its tool-call id; the call must collect the decision made for *it*,
by id when it has one, else by tool and arguments (identical calls are interchangeable).
A leaf of :mod:`agentguard.session`, kept apart because matching is its own question.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Final

from agentguard.enforcement.decision import Decision


def _key(name: str, args: Mapping[str, Any]) -> tuple[str, Hashable]:
    """What identical calls share: the tool and the text of its arguments in key order
    (keys are unique, so sorting the items compares keys only; keys of mixed types are
    ordered by their text, then their type, then their repr)."""
    try:
        items = sorted(args.items())
    except TypeError:
        items = sorted(args.items(), key=_mixed_key_order)
    return name, repr(items)


def _mixed_key_order(item: tuple[Any, Any]) -> tuple[str, str, str]:
    key = item[0]
    return str(key), type(key).__qualname__, repr(key)


def _same_values(proposed: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    """The same argument names holding the very same objects: then their keys are equal
    too, without rendering either (the usual case: a framework hands the tool the values
    its model turn proposed)."""
    if len(proposed) != len(args):
        return False
    missing = MISSING
    for name, value in args.items():  # noqa: SIM110 - a loop: all() adds a generator per call
        if proposed.get(name, missing) is not value:
            return False
    return True


MISSING: Any = object()


Pending = tuple[Decision, str, "str | None", list[tuple[str, Hashable]]]
"""A batch decision no call has collected yet: ``(decision, name, tool_call_id, key)``,
under the name and tool-call id it was proposed with. ``key`` holds the key
(:func:`_key`) of the decision's arguments (the firewall's copy: what was approved,
whatever the framework does to its own dict after) once a call had to be matched by it,
so a scan renders it at most once. A tuple, built once per proposed call: a class's
constructor costs four times as much."""


def matches(entry: Pending, args: Mapping[str, Any], key: list[tuple[str, Hashable]]) -> bool:
    """Is ``args`` the arguments of the call ``entry`` decided (same key)? ``key`` holds
    the caller's key once rendered, so a scan renders it at most once."""
    decision, name, _, rendered = entry
    if _same_values(decision.args, args):
        return True
    if not rendered:
        rendered.append(_key(name, decision.args))
    if not key:
        key.append(_key(name, args))
    return rendered[0] == key[0]


def collect(
    pending: dict[str, list[Pending]],
    by_id: dict[str, Pending],
    name: str,
    args: Mapping[str, Any],
    tool_call_id: str | None,
) -> Decision | None:
    """Take the batch decision for this call: the one with its tool-call id if given
    (and the same tool and arguments), else the first of the identical calls (they
    are interchangeable) whose id is this call's, else the first of them."""
    if tool_call_id is not None:
        found = by_id.get(tool_call_id)
        if found is not None and found[0].tool == name and found[0].args == args:
            take(pending, by_id, found)
            return found[0]
    queue = pending.get(name)
    if not queue:
        return None
    key: list[tuple[str, Hashable]] = []
    chosen: Pending | None = None
    for entry in queue:
        if matches(entry, args, key):
            if entry[0].tool_call_id == tool_call_id:
                chosen = entry
                break
            if chosen is None:
                chosen = entry
    if chosen is None:
        return None
    take(pending, by_id, chosen)
    return chosen[0]


EDITED: Final = (
    "its arguments were changed before it ran (a reviewer's edit, a middleware's): the call "
    "is judged again as it runs"
)
"""Why a batch decision whose call came with other arguments is withdrawn."""


def superseded(
    pending: dict[str, list[Pending]], by_id: dict[str, Pending], tool_call_id: str | None
) -> Decision | None:
    """The batch decision of ``tool_call_id`` when its call came with another tool or other
    arguments (:func:`collect` found none for it), taken out of both indexes: it will
    never run as decided, and left in flight it would hold back the calls judged after
    it (each waits for it up to the firewall's ``start_timeout``)."""
    found = None if tool_call_id is None else by_id.get(tool_call_id)
    if found is None:
        return None
    take(pending, by_id, found)
    return found[0]


def take(pending: dict[str, list[Pending]], by_id: dict[str, Pending], entry: Pending) -> None:
    """Remove a collected batch decision from both indexes (by identity: two identical
    calls' decisions differ only in their ids)."""
    _, name, tool_call_id, _ = entry
    queue = pending[name]
    for index, queued in enumerate(queue):
        if queued is entry:
            del queue[index]
            break
    if not queue:
        del pending[name]
    if tool_call_id is not None and by_id.get(tool_call_id) is entry:
        del by_id[tool_call_id]


__all__ = ["EDITED", "MISSING", "Pending", "collect", "matches", "superseded", "take"]
