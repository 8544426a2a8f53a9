"""The trace model of AgentLTL Appendix A.1: calls ``c_i = (name, args, result, i)``.

A proposed call (checked by the firewall before it runs) has no result yet; its
result is the :data:`UNKNOWN` sentinel, and every test on it is undecided.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.final_tool import count_tool_calls


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

    A result given as JSON text is decoded here, once, with :func:`decode_result`: every
    path that builds a call (the firewall, the monitor's users, every loader) then sees
    the same value, so a run judged online and its trace judged offline agree.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    result: Any = UNKNOWN
    position: int = 0
    error: bool = False

    def __post_init__(self) -> None:
        if type(self.result) is str:
            decoded = decode_result(self.result)
            if decoded is not self.result:
                object.__setattr__(self, "result", decoded)

    @property
    def has_result(self) -> bool:
        return self.result is not UNKNOWN

    def at(self, position: int) -> Call:
        return Call(self.name, self.args, self.result, position, self.error)

    def with_result(self, result: Any, *, error: bool | None = None) -> Call:
        return Call(
            self.name, self.args, result, self.position, self.error if error is None else error
        )

    def to_record(self) -> dict[str, Any]:
        """The Appendix A.1.2 record (`tool_result` omitted while unknown)."""
        out: dict[str, Any] = {"tool_name": self.name, "arguments": dict(self.args)}
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
        number of calls that are not ``final_answer``
        (:func:`agentguard.trace.final_tool.count_tool_calls`, as the firewall counts).
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
    def tool_errors(self) -> frozenset[int]:
        """Positions of calls whose result is a tool error (``metrics["tool_errors"]``)."""
        raw = self.metrics.get("tool_errors", ())
        if not isinstance(raw, (list, tuple, set, frozenset)):
            return frozenset()
        return frozenset(i for i in raw if isinstance(i, int) and not isinstance(i, bool))


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
    if isinstance(result, Mapping) and "content" in result:  # an MCP CallToolResult?
        from agentguard.trace.mcp_content import mcp_result  # imports this module

        result, mcp_error = mcp_result(result)
        error = error or mcp_error is True
    return Call(name, args, result, index, error)
