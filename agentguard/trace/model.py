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

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from agentguard.errors import TraceRecordError
from agentguard.trace.final_tool import count_tool_calls

CallKind = Literal["tool", "user", "assistant"]
"""What a position of the trace is: a tool call, or a message of the user / assistant."""

USER_MESSAGE: Final = "user_message"
"""The name of a user message event (``args={"text": ...}``)."""
ASSISTANT_MESSAGE: Final = "assistant_message"
"""The name of an assistant message event (``args={"text": ..., "tool_calls": n}``)."""
MESSAGE_NAMES: Final[Mapping[str, str]] = {"user": USER_MESSAGE, "assistant": ASSISTANT_MESSAGE}
"""Event name of each dialogue kind."""
DIALOGUE_NAMES: Final = frozenset(MESSAGE_NAMES.values())
"""The reserved names: a tool called so would be indistinguishable from a message."""
DROPPED_MESSAGES: Final = "dropped_messages"
"""Metrics key: how many dialogue events :meth:`Trace.without_messages` dropped."""


class Unknown:
    """Type of :data:`UNKNOWN`: the result of a call that has not run yet."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = Unknown()


def decode_result(value: Any) -> Any:
    """Decode a JSON-encoded tool result (the paper's records store results as JSON text).

    Text that is not JSON, or JSON that is a bare string, stays the original text.
    """
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[") or text in ("true", "false", "null") or _looks_numeric(text):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def _looks_numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: name, argument mapping, result (or UNKNOWN), position.

    ``args`` is never mutated by agentguard; treat it as read-only. ``error`` marks a
    result that the source recorded as a tool error (``is_error``, ``status: "error"``)
    or a tool that raised; the error text stays the result, so tests on it still see it.
    ``kind`` says whether the position is a tool call or a dialogue event (see the module
    docstring); a tool call may not use a reserved dialogue name.

    A result given as JSON text is decoded here, once, with :func:`decode_result`: every
    path that builds a call (the firewall, the monitor's users, every loader) then sees
    the same value, so a run judged online and its trace judged offline agree.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    result: Any = UNKNOWN
    position: int = 0
    error: bool = False
    kind: CallKind = "tool"

    def __post_init__(self) -> None:
        if self.kind == "tool":
            if self.name in DIALOGUE_NAMES:
                raise TraceRecordError(
                    f"{self.name!r} is reserved for dialogue events; a tool cannot be "
                    "called so (rename the tool)",
                    source="<call>",
                )
        elif MESSAGE_NAMES.get(self.kind) != self.name:
            raise TraceRecordError(
                f"a call of kind {self.kind!r} must be named "
                f"{MESSAGE_NAMES.get(self.kind, 'a tool')!r}, got {self.name!r}",
                source="<call>",
            )
        if type(self.result) is str:
            decoded = decode_result(self.result)
            if decoded is not self.result:
                object.__setattr__(self, "result", decoded)

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


@dataclass(frozen=True, slots=True)
class Trace(Sequence[Call]):
    """A finite sequence of calls plus the metrics record ``μ`` that rides along."""

    calls: tuple[Call, ...] = ()
    metrics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        fixed = tuple(c if c.position == i else c.at(i) for i, c in enumerate(self.calls))
        object.__setattr__(self, "calls", fixed)

    # Sequence protocol -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.calls)

    def __getitem__(self, index: Any) -> Any:
        return self.calls[index]

    def __iter__(self) -> Iterator[Call]:
        return iter(self.calls)

    @property
    def names(self) -> tuple[str, ...]:
        """The tool sequence ``⟨c_0.name, …⟩``."""
        return tuple(c.name for c in self.calls)

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
        writes its ``"kind"``) is a dialogue event.
        """
        calls = []
        errors = []
        for index, record in enumerate(records):
            calls.append(_call_from_record(record, index, source))
            if calls[-1].error:  # is_error, status "error", or an MCP result's isError
                errors.append(index)
        out = dict(metrics or {})
        if errors:
            out["tool_errors"] = errors
        # a record without a count gets the firewall's: tool calls, final answers excluded
        out.setdefault("num_tool_calls", count_tool_calls(calls))
        return cls(tuple(calls), out)

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

    @property
    def has_messages(self) -> bool:
        """Whether some position is a dialogue event."""
        return any(c.kind != "tool" for c in self.calls)

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


_POSITION_KEYS: Final = ("tool_errors", "user_tool_calls")
"""Metrics fields that list positions of the trace (renumbered by ``without_messages``)."""


def decode_args(raw: Any, where: str, source: str) -> dict[str, Any]:
    """Arguments as a dict: JSON text is decoded, None is ``{}``, anything else is an error.

    The one decoder of every loader (records here, the trace formats in ``formats``);
    ``where`` names the record in the error (e.g. ``"record 3"``).
    """
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise TraceRecordError(
                f"{where or 'a tool call'}: arguments are not valid JSON ({exc})", source=source
            ) from None
    if not isinstance(raw, Mapping):
        raise TraceRecordError(
            f"{where or 'a tool call'}: arguments must be an object, got {type(raw).__name__}",
            source=source,
        )
    return dict(raw)


_NAME_KEYS = ("tool_name", "name", "tool")
_ARG_KEYS = ("arguments", "args", "input", "tool_input")
_RESULT_KEYS = ("tool_result", "result", "output", "observation")


def _call_from_record(record: Any, index: int, source: str) -> Call:
    if not isinstance(record, Mapping):
        raise TraceRecordError(
            f"tool call {index} must be an object, got {type(record).__name__}", source=source
        )
    name = next((record[k] for k in _NAME_KEYS if k in record), None)
    if not isinstance(name, str) or not name:
        raise TraceRecordError(f"tool call {index} has no 'tool_name' string", source=source)
    raw_args: Any = next((record[k] for k in _ARG_KEYS if k in record), {})
    args = decode_args(raw_args, f"record {index}", source)
    result: Any = UNKNOWN
    for key in _RESULT_KEYS:
        if key in record:
            result = record[key]  # Call decodes JSON text
            break
    error = record.get("is_error") is True or record.get("status") == "error"
    kind = _kind_of(record, name, index, source)
    if kind != "tool":
        return Call(name, args, result, index, error, kind)
    if isinstance(result, Mapping) and "content" in result:  # an MCP CallToolResult?
        from agentguard.trace.mcp_content import mcp_result  # imports this module

        result, mcp_error = mcp_result(result)
        error = error or mcp_error is True
    return Call(name, args, result, index, error)


def _kind_of(record: Mapping[str, Any], name: str, index: int, source: str) -> CallKind:
    """A record's kind: its ``"kind"``, or a dialogue event's from its reserved name."""
    kind = record.get("kind")
    if kind is None:
        kind = next((k for k, n in MESSAGE_NAMES.items() if n == name), "tool")
    if kind == "tool" and name not in DIALOGUE_NAMES:
        return "tool"
    if kind in MESSAGE_NAMES and MESSAGE_NAMES[kind] == name:
        return "user" if kind == "user" else "assistant"
    raise TraceRecordError(
        f"tool call {index}: kind {kind!r} does not fit the name {name!r} "
        f"(dialogue events are {', '.join(sorted(DIALOGUE_NAMES))})",
        source=source,
    )
