"""The trace model of AgentLTL Appendix A.1: calls ``c_i = (name, args, result, i)``.

A proposed call (checked by the firewall before it runs) has no result yet; its
result is the :data:`UNKNOWN` sentinel, and every test on it is undecided.

A position may also be a *dialogue event*: a message of the user or of the assistant,
kept as a call of ``kind`` ``"user"`` / ``"assistant"`` named :data:`USER_MESSAGE` /
:data:`ASSISTANT_MESSAGE` with ``args={"text": ...}``, so formulas test it like any
call (``O user_message(text ~ /yes/i)``) and no operator needs to know about it. The
two names are reserved: no tool may be called that (docs/traces.md, "Dialogue events").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import FrozenInstanceError
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace._slots import slot_builder
from agentguard.trace.call import Call as Call
from agentguard.trace.call import calls_of
from agentguard.trace.call_fields import ASSISTANT_MESSAGE as ASSISTANT_MESSAGE
from agentguard.trace.call_fields import DIALOGUE_NAMES as DIALOGUE_NAMES
from agentguard.trace.call_fields import MESSAGE_NAMES as MESSAGE_NAMES
from agentguard.trace.call_fields import UNKNOWN as UNKNOWN
from agentguard.trace.call_fields import USER_MESSAGE as USER_MESSAGE
from agentguard.trace.call_fields import CallKind as CallKind
from agentguard.trace.call_fields import Unknown as Unknown
from agentguard.trace.call_fields import decode_args as decode_args
from agentguard.trace.call_fields import decode_result as decode_result
from agentguard.trace.call_records import CallColumns, read_call_records
from agentguard.trace.json_text import collector_paused
from agentguard.trace.tool_codes import ToolCodes

PROMOTED_CALLS: Final = 10_000
"""A trace of this many calls files them with the long-lived objects when it builds them
(:func:`~agentguard.trace.json_text.collector_paused`); a shorter one only pauses the
collector."""

DROPPED_MESSAGES: Final = "dropped_messages"
"""Metrics key: how many dialogue events :meth:`Trace.without_messages` dropped."""


class Trace(Sequence[Call]):
    """A finite sequence of calls plus the metrics record ``μ`` that rides along.

    Immutable. A trace read from call records keeps them as columns
    (:class:`~agentguard.trace.call_records.CallColumns`) and builds its :class:`Call`
    objects the first time one is asked for: scoring a corpus in bulk reads only the
    tool names, and most of a loader's time was spent building calls nobody looked at.
    """

    __slots__ = ("_calls", "_columns", "_dialogue", "_names", "_tools", "metrics")

    metrics: Mapping[str, Any]
    _calls: tuple[Call, ...] | None
    _columns: CallColumns | None
    _names: tuple[str, ...] | None
    _dialogue: bool | None
    _tools: ToolCodes | None

    def __init__(
        self, calls: Iterable[Call] = (), metrics: Mapping[str, Any] | None = None
    ) -> None:
        fixed = tuple(c if c.position == i else c.at(i) for i, c in enumerate(calls))
        _set(self, "_calls", fixed)
        _set(self, "_columns", None)
        _set(self, "_names", None)
        _set(self, "_dialogue", None)
        _set(self, "_tools", None)
        _set(self, "metrics", {} if metrics is None else metrics)

    @classmethod
    def from_columns(cls, columns: CallColumns, metrics: Mapping[str, Any]) -> Trace:
        """A trace over ``columns`` (their calls are built when first asked for)."""
        if cls is Trace:  # the loaders build one per record: through its slots
            return _columns_trace(
                None, columns, columns.names, columns.kinds is not None, columns.tools, metrics
            )
        out = cls.__new__(cls)
        _set(out, "_calls", None)
        _set(out, "_columns", columns)
        _set(out, "_names", columns.names)
        _set(out, "_dialogue", columns.kinds is not None)
        _set(out, "_tools", columns.tools)
        _set(out, "metrics", metrics)
        return out

    @property
    def calls(self) -> tuple[Call, ...]:
        """The calls, in order (``calls[i].position == i``)."""
        calls = self._calls
        if calls is None:
            cols = self._columns
            assert cols is not None  # one of the two is always set
            # calls and their argument dicts hold no cycles; many are kept long
            with collector_paused(promote=len(cols.names) >= PROMOTED_CALLS):
                calls = calls_of(cols)
            _set(self, "_calls", calls)
            _set(self, "_columns", None)
        return calls

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.calls, self.metrics) == (other.calls, other.metrics)

    def __hash__(self) -> int:
        return hash((self.calls, self.metrics))

    def __repr__(self) -> str:
        return f"Trace(calls={self.calls!r}, metrics={self.metrics!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        if self._columns is not None:  # pickled as columns: unpickling builds no calls
            return (Trace.from_columns, (self._columns, self.metrics))
        return (Trace, (self.calls, self.metrics))

    # Sequence protocol -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index: Any) -> Any:
        return self.calls[index]

    def __iter__(self) -> Iterator[Call]:
        return iter(self.calls)

    @property
    def names(self) -> tuple[str, ...]:
        """The tool sequence ``⟨c_0.name, …⟩``."""
        names = self._names
        if names is None:
            names = tuple(c.name for c in self.calls)
            _set(self, "_names", names)
        return names

    @property
    def tool_codes(self) -> ToolCodes | None:
        """The tool sequence as integers (:mod:`agentguard.trace.tool_codes`): coded when
        read from call records, else here, each time (a trace built from calls keeps no
        copy); None when a tool name is past the code table."""
        return self._tools if self._tools is not None else ToolCodes.of(self.names)

    def append(self, call: Call) -> Trace:
        return Trace((*self.calls, call.at(len(self.calls))), self.metrics)

    # constructors ------------------------------------------------------------------
    @classmethod
    def of(cls, *names_or_calls: str | Call, metrics: Mapping[str, Any] | None = None) -> Trace:
        """A trace from tool names (no args, unknown results) or ready calls; handy in tests."""
        calls = [c if isinstance(c, Call) else Call(c) for c in names_or_calls]
        return cls(tuple(calls), dict(metrics or {}))

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        metrics: Mapping[str, Any] | None = None,
        source: str = "<records>",
    ) -> Trace:
        """From ``{tool_name, arguments, tool_result}`` records (Appendix A.1.2).

        Also accepts the common spellings ``name``/``tool``, ``args``/``input``,
        ``result``/``output``. ``arguments`` given as JSON text is decoded; a result that is
        an MCP ``CallToolResult`` is unwrapped (:mod:`agentguard.trace.mcp_content`). A record
        with ``"is_error": true`` (or ``"status": "error"``) is listed in
        ``metrics["tool_errors"]``. Without a ``num_tool_calls`` in ``metrics``, it is the
        number of tool calls that are not ``final_answer``
        (:func:`agentguard.trace.final_tool.count_tool_calls`, as the firewall counts).
        A record named ``user_message`` / ``assistant_message`` (``Call.to_record`` also
        writes its ``"kind"``) is a dialogue event. The records are read by
        :mod:`agentguard.trace.call_records`.
        """
        return cls.from_read_columns(read_call_records(records, source), metrics)

    @classmethod
    def from_read_columns(
        cls, columns: CallColumns, metrics: Mapping[str, Any] | None = None
    ) -> Trace:
        """What :meth:`from_records` makes of the records ``columns`` were read from
        (``metrics`` copied, with the tool errors and the call count added as there)."""
        out = dict(metrics) if metrics else {}
        if columns.errors is not None:
            errors = columns.error_positions()
            if errors:
                out["tool_errors"] = errors
        # a record without a count gets the firewall's: tool calls, final answers excluded
        if "num_tool_calls" not in out:
            out["num_tool_calls"] = columns.tool_call_count()
        return cls.from_columns(columns, out)

    @staticmethod
    def from_read_column_lists(
        columns: Sequence[CallColumns | None], metrics: Sequence[Mapping[str, Any]]
    ) -> list[Trace | None]:
        """``Trace.from_read_columns(c, m)`` of each pair (None where ``c`` is None), in
        one loop: a JSON Lines reader builds a trace per line, and the calls of
        ``from_read_columns`` cost more than the trace. Columns a chunk reader made
        (no tool error, no dialogue event, their final answers counted) are built here;
        any other by ``from_read_columns`` itself."""
        out: list[Trace | None] = []
        append = out.append
        for cols, record in zip(columns, metrics, strict=True):
            if cols is None:
                append(None)
            elif cols.errors is None and cols.kinds is None and cols.finals is not None:
                own = dict(record)
                if "num_tool_calls" not in own:
                    own["num_tool_calls"] = len(cols.names) - cols.finals
                append(_columns_trace(None, cols, cols.names, False, cols.tools, own))
            else:
                append(Trace.from_read_columns(cols, record))
        return out

    @classmethod
    def from_metrics(cls, record: Mapping[str, Any], *, source: str = "<metrics>") -> Trace:
        """From the paper's metrics record ``μ`` (its ``tool_calls`` list is the trace)."""
        if not isinstance(record, Mapping):
            raise TraceRecordError(
                f"a metrics record must be a JSON object, got {type(record).__name__}",
                source=source,
            )
        if "tool_calls" not in record:
            raise TraceRecordError("metrics record has no 'tool_calls' list", source=source)
        tool_calls = record["tool_calls"]
        if not isinstance(tool_calls, list):
            raise TraceRecordError(
                f"'tool_calls' must be a list, got {type(tool_calls).__name__}", source=source
            )
        metrics = dict(record)
        return cls.from_records(tool_calls, metrics=metrics, source=source)

    def with_metrics(self, metrics: Mapping[str, Any]) -> Trace:
        """The same calls with other metrics (calls not yet built stay unbuilt)."""
        if self._columns is not None:
            return Trace.from_columns(self._columns, metrics)
        return Trace(self.calls, metrics)

    @property
    def has_messages(self) -> bool:
        """Whether some position is a dialogue event."""
        dialogue = self._dialogue
        if dialogue is None:
            dialogue = any(c.kind != "tool" for c in self.calls)
            _set(self, "_dialogue", dialogue)
        return dialogue

    def without_messages(self) -> Trace:
        """The tool calls only, renumbered; position lists in the metrics
        (``tool_errors``, ``user_tool_calls``) follow them, and ``metrics[DROPPED_MESSAGES]``
        counts the events dropped (so a spec that needs them can say they are gone). The
        same trace when it has no dialogue events."""
        if not self.has_messages:
            return self
        new = {c.position: i for i, c in enumerate(c for c in self.calls if c.is_tool)}
        metrics = dict(self.metrics)
        dropped = metrics.get(DROPPED_MESSAGES)
        earlier = dropped if isinstance(dropped, int) else 0
        metrics[DROPPED_MESSAGES] = earlier + len(self.calls) - len(new)
        for key in _POSITION_KEYS:
            raw = metrics.get(key)
            if isinstance(raw, (list, tuple)):
                metrics[key] = [new[p] for p in raw if isinstance(p, int) and p in new]
        return Trace(tuple(c for c in self.calls if c.is_tool), metrics)

    @property
    def tool_errors(self) -> frozenset[int]:
        """Positions of calls whose result is a tool error (``metrics["tool_errors"]``)."""
        raw = self.metrics.get("tool_errors", ())
        if not isinstance(raw, (list, tuple, set, frozenset)):
            return frozenset()
        return frozenset(i for i in raw if isinstance(i, int) and not isinstance(i, bool))


_set = object.__setattr__  # Trace is immutable: its own slots are set past __setattr__
_columns_trace = slot_builder(
    Trace, ("_calls", "_columns", "_names", "_dialogue", "_tools", "metrics")
)


_POSITION_KEYS: Final = ("tool_errors", "user_tool_calls")
"""Metrics fields that list positions of the trace (renumbered by ``without_messages``)."""
