"""A call of a trace, ``c_i = (name, args, result, i)`` (AgentLTL Appendix A.1), and how
calls are built a column at a time from call records.

Split from :mod:`agentguard.trace.model` (which re-exports :class:`Call` beside
:class:`~agentguard.trace.model.Trace`): a call is a value of its own, and building many
from columns is the loaders' hot path (:func:`calls_of`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from itertools import repeat
from types import MappingProxyType
from typing import Any, Final, cast

from agentguard.errors import TraceRecordError
from agentguard.trace._slots import slot_builder
from agentguard.trace.arguments import fresh_copy
from agentguard.trace.call_fields import (
    DIALOGUE_NAMES,
    JSON_START,
    MESSAGE_NAMES,
    UNKNOWN,
    CallKind,
    decode_result,
)
from agentguard.trace.call_records import CallColumns
from agentguard.trace.json_values import json_value, plain

_NEW_ARGS: Final[Mapping[str, Any]] = MappingProxyType({})
"""The default of ``Call(args=...)``: each call given none gets a new ``{}``."""


@dataclass(frozen=True, slots=True, init=False)
class Call:
    """One tool call: name, argument mapping, result (or UNKNOWN), position.

    ``args`` is never mutated by agentguard; treat it as read-only. ``error`` marks a
    result that the source recorded as a tool error (``is_error``, ``status: "error"``)
    or a tool that raised; the error text stays the result, so tests on it still see it.
    ``kind`` says whether the position is a tool call or a dialogue event (see the module
    docstring); a tool call may not use a reserved dialogue name.

    A result given as JSON text is decoded here, once, with :func:`decode_result`, and a
    result or argument that is not JSON data (a ``Decimal``, a ``date``, a ``set``, a
    dataclass) is made the JSON data the log writes of it
    (:func:`~agentguard.trace.json_values.json_value`): every path that builds a call
    (the firewall, the monitor's users, every loader) then sees the same value, so a run
    judged online and its trace judged offline (from the log) agree.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    result: Any = UNKNOWN
    position: int = 0
    error: bool = False
    kind: CallKind = "tool"

    def __init__(
        self,
        name: str,
        args: Mapping[str, Any] = _NEW_ARGS,
        result: Any = UNKNOWN,
        position: int = 0,
        error: bool = False,
        kind: CallKind = "tool",
    ) -> None:
        """The generated ``__init__`` and its checks, each field stored through its slot
        (the firewall builds a call per step; ``object.__setattr__`` per field, as a frozen
        dataclass's ``__init__`` does, was most of its cost). ``args`` omitted is a new
        ``{}``, as the field's default factory makes it."""
        if kind == "tool":
            if name in DIALOGUE_NAMES:
                raise TraceRecordError(
                    f"{name!r} is reserved for dialogue events; a tool cannot be "
                    "called so (rename the tool)",
                    source="<call>",
                )
        elif MESSAGE_NAMES.get(kind) != name:
            raise TraceRecordError(
                f"a call of kind {kind!r} must be named "
                f"{MESSAGE_NAMES.get(kind, 'a tool')!r}, got {name!r}",
                source="<call>",
            )
        _CALL_NAME(self, name)
        if args is _NEW_ARGS:
            args = {}
        elif isinstance(args, Mapping) and not plain(args):  # a value JSON has no word for
            args = json_value(dict(args))
        _CALL_ARGS(self, args)
        if type(result) is not str and result is not UNKNOWN and not plain(result):
            result = json_value(result)  # text it became (bytes) is decoded as text is
        if type(result) is str and result and (result[0] in JSON_START or result[0].isspace()):
            result = decode_result(result)  # its first look inlined: most text is no JSON
        _CALL_RESULT(self, result)
        _CALL_POSITION(self, position)
        _CALL_ERROR(self, error)
        _CALL_KIND(self, kind)

    @classmethod
    def message(cls, kind: CallKind, text: Any, **fields: Any) -> Call:
        """A dialogue event: ``user_message(text=...)`` or ``assistant_message(text=...)``."""
        if kind not in MESSAGE_NAMES:
            raise TraceRecordError(
                f"a message kind is 'user' or 'assistant', got {kind!r}", source="<call>"
            )
        return cls(MESSAGE_NAMES[kind], {"text": text, **fields}, kind=kind)

    @property
    def is_tool(self) -> bool:
        """A tool call (not a dialogue event)."""
        return self.kind == "tool"

    @property
    def has_result(self) -> bool:
        return self.result is not UNKNOWN

    def at(self, position: int) -> Call:
        return Call(self.name, self.args, self.result, position, self.error, self.kind)

    def with_result(self, result: Any, *, error: bool | None = None) -> Call:
        return Call(
            self.name,
            self.args,
            result,
            self.position,
            self.error if error is None else error,
            self.kind,
        )

    @staticmethod
    def proposed(name: str, args: Mapping[str, Any]) -> Call:
        """``Call(name, args)``, a tool call whose result is not known yet, as the firewall
        builds one per proposal: through the slots' twin (the name checked as the
        constructor checks it)."""
        if name in DIALOGUE_NAMES:
            return Call(name, args)  # the constructor's own error
        if args and not plain(args):
            args = json_value(dict(args))
        return _build_call(name, args, UNKNOWN, 0, False, "tool")

    def ran(self, result: Any, position: int, error: bool = False) -> Call:
        """This call as it ran: ``Call(name, args, result, position, error, kind)``.

        Its name and kind are this call's, checked when it was built, so only the result
        is decoded as the constructor decodes it; the firewall enters every executed
        call so, built through the slots' twin (agentguard/trace/_slots.py) at a third
        of the constructor's cost."""
        if type(result) is dict or type(result) is list or type(result) is tuple:
            # the call's own copy: a tool that keeps its result and changes it later (the
            # next time it runs) changes neither the trace nor what is judged at the end
            result = fresh_copy(result) if plain(result) else json_value(result)
        elif type(result) is not str and result is not UNKNOWN and not plain(result):
            result = json_value(result)  # text it became (bytes) is decoded as text is
        if type(result) is str:
            result = decode_result(result)
        return _build_call(self.name, self.args, result, position, error, self.kind)

    def seen_as(self, args: Mapping[str, Any], result: Any) -> Call:
        """This call with ``args`` and ``result`` replaced by values that are JSON data
        already (a provenance view, agentguard/semantics/provenance_index.py): no check,
        no decoding, through the slots' twin."""
        return _build_call(self.name, args, result, self.position, self.error, self.kind)

    def to_record(self) -> dict[str, Any]:
        """The Appendix A.1.2 record (`tool_result` omitted while unknown; a dialogue
        event carries its ``kind``)."""
        out: dict[str, Any] = {"tool_name": self.name, "arguments": dict(self.args)}
        if self.kind != "tool":
            out["kind"] = self.kind
        if self.has_result:
            out["tool_result"] = self.result
        if self.error:
            out["is_error"] = True
        return out


_CALL_NAME, _CALL_ARGS, _CALL_RESULT, _CALL_POSITION, _CALL_ERROR, _CALL_KIND = (
    getattr(Call, f.name).__set__ for f in fields(Call)
)
if [f.name for f in fields(Call)] != ["name", "args", "result", "position", "error", "kind"]:
    raise TypeError("Call changed: update Call.__init__ and calls_of (agentguard/trace/call.py)")
_build_call: Final = slot_builder(Call)


def _own_args(args: Mapping[str, Any] | None) -> dict[str, Any]:
    """A call's own copy of a record's arguments (None, for no arguments, is ``{}``)."""
    return {} if args is None else dict(args)


def calls_of(cols: CallColumns) -> tuple[Call, ...]:
    """The calls of ``cols``, each what ``Call(...)`` makes of its fields, built a field at
    a time: the reader already checked every name against its kind, so of the checks in
    ``Call.__init__`` only the decoding of results given as JSON text is left, and it is
    done here for the results that are text."""
    n = len(cols.names)
    results: Iterable[Any] = repeat(UNKNOWN) if cols.results is None else cols.results
    if cols.results is not None and str in set(map(type, cols.results)):
        results = [decode_result(r) if type(r) is str else r for r in cols.results]
    args = cols.args
    owned: Iterable[dict[str, Any]]
    if args is None:
        owned = map(dict, repeat((), n))
    elif None not in args:
        owned = map(dict, cast(list[Mapping[str, Any]], args))
    else:
        owned = map(_own_args, args)
    calls = list(map(_new_object, repeat(Call, n)))
    _consume(map(_CALL_NAME, calls, cols.names))
    _consume(map(_CALL_ARGS, calls, owned))
    _consume(map(_CALL_RESULT, calls, results))
    _consume(map(_CALL_POSITION, calls, range(n)))
    _consume(map(_CALL_ERROR, calls, repeat(False) if cols.errors is None else cols.errors))
    _consume(map(_CALL_KIND, calls, repeat("tool") if cols.kinds is None else cols.kinds))
    return tuple(calls)


_new_object = object.__new__
_consume = deque[Any](maxlen=0).extend


__all__ = ["Call", "calls_of"]
