"""What every trace format shares: the format record, and a call log that joins
tool calls to their results by id.

A format is data (a name, a shape test, a loader), not a class to inherit from, so
the detector can list and try them in order.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agentguard.errors import TraceRecordError
from agentguard.trace.call_fields import call_arguments, unread_arguments
from agentguard.trace.final_tool import FINAL_TOOL, count_tool_calls
from agentguard.trace.model import (
    DIALOGUE_NAMES,
    UNKNOWN,
    Call,
    CallKind,
    Trace,
    decode_args,
    decode_result,
)

FINAL_ANSWER: Final = FINAL_TOOL
"""The name of the call a run's final answer becomes (the firewall's integrations use it)."""

TOOL_ERRORS: Final = "tool_errors"
"""Metrics key: positions of calls whose result is a tool error (present only when some are)."""

Loader = Callable[[Any, str, bool], Trace]
"""``load(value, source, final_answer) -> Trace``; raises TraceRecordError on a bad shape."""

Detector = Callable[[Any], bool]
"""``detect(value) -> bool``: does this JSON value have the format's shape?"""


@dataclass(frozen=True, slots=True)
class TraceFormat:
    """One input format: how to recognise it and how to read it into a Trace."""

    name: str
    summary: str
    detect: Detector
    load: Loader


class CallLog:
    """Calls in the order they were made, joined later with results by call id.

    A result whose id is unknown goes to the oldest call still waiting (logs that drop
    ids are common); a result with nothing waiting is ignored. A call answered with
    agentguard's refusal never ran (:meth:`refused`): the trace leaves it out and the
    positions after it move up, as if the transcript had never held it.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.calls: list[Call] = []
        self.errors: list[int] = []
        self._pending: dict[str, int] = {}
        self._waiting: list[int] = []
        self._refused: set[int] = set()

    def add(self, name: Any, args: Any, *, ref: Any = None, where: str = "") -> int:
        """Record a call (result unknown for now); returns its position."""
        if not isinstance(name, str) or not name:
            raise TraceRecordError(f"{where or 'a tool call'} has no tool name", source=self.source)
        if name in DIALOGUE_NAMES:
            raise TraceRecordError(
                f"{where or 'a tool call'}: the tool name {name!r} is reserved for dialogue "
                "events (docs/traces.md, 'Dialogue events')",
                source=self.source,
            )
        slot = len(self.calls)
        self.calls.append(Call(name, decode_args(args, where, self.source), UNKNOWN, slot))
        if ref is not None and ref != "":
            self._pending[str(ref)] = slot
        self._waiting.append(slot)
        return slot

    def message(self, kind: CallKind, text: Any, **fields: Any) -> int | None:
        """Record a dialogue event (a user or assistant message) with its text; text-less
        parts (images) are dropped, and a message with no text is no event (None)."""
        text = text_of(text)
        if not isinstance(text, str):
            return None
        slot = len(self.calls)
        self.calls.append(Call.message(kind, text, **fields).at(slot))
        return slot

    def turn(self, role: Any, content: Any, tool_calls: int = 0) -> int | None:
        """The dialogue event of one chat message (docs/traces.md, "Dialogue events"):
        every assistant message is ``assistant_message(text, tool_calls)`` (text ``""``
        when it only calls tools), a user message with text ``user_message(text,
        tool_calls)``; other roles are none."""
        if role == "assistant":
            text = text_of(content)
            return self.message(
                "assistant", text if isinstance(text, str) else "", tool_calls=tool_calls
            )
        if role == "user":
            return self.message("user", content, tool_calls=tool_calls)
        return None

    def seen(self, ref: Any) -> bool:
        """Whether a call with this id was already recorded (logs may repeat a call)."""
        return ref is not None and str(ref) in self._pending

    def resolve(
        self,
        ref: Any,
        result: Any,
        *,
        error: bool = False,
        name: str | None = None,
        refused: bool = False,
    ) -> int | None:
        """Attach ``result`` to the call with id ``ref`` (or, failing that, the oldest waiting
        call, preferring one named ``name``); returns its position or None. ``refused``: the
        answer is agentguard's refusal, so the call is left out (:meth:`refused`)."""
        slot = self._pending.pop(str(ref), None) if ref is not None else None
        if slot is not None and slot not in self._waiting:
            slot = None
        if slot is None:
            named = [s for s in self._waiting if name is None or self.calls[s].name == name]
            slot = named[0] if named else None
        if slot is None:
            return None
        self._waiting.remove(slot)
        if refused:
            self.refused(slot)
            return slot
        self.calls[slot] = self.calls[slot].with_result(result, error=error)
        if error:
            self.errors.append(slot)
        return slot

    def refused(self, slot: int) -> None:
        """The call at ``slot`` was answered with agentguard's refusal: it never ran, so the
        trace leaves it out (docs/traces.md, "Calls agentguard refused")."""
        if slot in self._waiting:
            self._waiting.remove(slot)
        self._refused.add(slot)

    def set_result(self, slot: int, result: Any, *, error: bool = False) -> None:
        """Attach a result to a known position (formats that store results beside calls)."""
        if slot in self._waiting:
            self._waiting.remove(slot)
        self.calls[slot] = self.calls[slot].with_result(result, error=error)
        if error:
            self.errors.append(slot)

    def final_answer(self, answer: Any) -> None:
        """Append ``final_answer(answer=...)`` unless the run already ended with one."""
        last = len(self.calls) - 1
        while last in self._refused:  # the last call that ran
            last -= 1
        if last >= 0 and self.calls[last].name == FINAL_ANSWER:
            return
        slot = self.add(FINAL_ANSWER, {"answer": answer})
        self.set_result(slot, answer)

    def trace(self, metrics: Mapping[str, Any] | None = None) -> Trace:
        calls, errors = self.calls, self.errors
        if self._refused:  # the calls that ran, renumbered; error positions follow them
            kept = [s for s in range(len(calls)) if s not in self._refused]
            moved = {old: new for new, old in enumerate(kept)}
            calls = [calls[s] for s in kept]
            errors = [moved[s] for s in errors if s in moved]
        # counted as the firewall counts: tool calls, final answers excluded
        out: dict[str, Any] = {"num_tool_calls": count_tool_calls(calls)}
        if errors:
            out[TOOL_ERRORS] = sorted(set(errors))
        out.update(metrics or {})
        return Trace(tuple(calls), out)


def arguments_of(
    call: Mapping[str, Any],
    key: str,
    read: Collection[str],
    where: str,
    source: str,
    *,
    outer: Mapping[str, Any] | None = None,
    outer_read: Collection[str] = (),
) -> dict[str, Any]:
    """A call's arguments, ``call[key]``, never silently lost (docs/traces.md,
    "Arguments are never lost"): when there are none, an object under a key the reader
    does not read (``read`` for ``call``; ``outer_read`` for ``outer``, the record that
    holds ``call`` when the function sits inside one) is an error naming the record."""
    args = call_arguments(call, key, read, where, source)
    if not args and outer is not None and outer is not call:
        other = unread_arguments(outer, outer_read)
        if other is not None:
            raise TraceRecordError(
                f"{where or 'a tool call'}: no arguments under {key!r}, but an object "
                f"under {other!r}, which this format does not read; the call's arguments "
                "are not guessed (read the file in its own format)",
                source=source,
            )
    return args


def text_of(content: Any) -> Any:
    """Message content as text: a string stays, a list of parts joins its text parts.

    Parts without text (images, files) are dropped; a list with no text at all is
    returned unchanged, so nothing silently becomes an empty answer.
    """
    if isinstance(content, str) or content is None:
        return content
    if isinstance(content, Sequence):
        texts = [_part_text(p) for p in content]
        kept = [t for t in texts if t is not None]
        return "\n".join(kept) if kept else list(content)
    return content


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        for key in ("text", "output_text", "content"):
            value = part.get(key)
            if isinstance(value, str):
                return value
    return None


def result_of(content: Any) -> Any:
    """A tool result as recorded in a message: its text, JSON decoded."""
    return decode_result(text_of(content))


def decode_repr(value: Any) -> Any:
    """Decode JSON text, then a Python literal repr (``str(dict)``, as smolagents records)."""
    decoded = decode_result(value)
    if isinstance(decoded, str) and decoded.strip()[:1] in ("{", "[", "("):
        try:
            return ast.literal_eval(decoded.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return decoded
    return decoded


def mappings(value: Any) -> bool:
    """A non-string sequence whose items are all objects."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        and all(isinstance(v, Mapping) for v in value)
    )


def list_at(record: Mapping[str, Any], key: str, where: str, source: str) -> list[Any]:
    """``record[key]`` as a list: missing or null is empty, anything but a list is an error."""
    value = record.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise TraceRecordError(
            f"{where}: '{key}' must be a list, got {type(value).__name__}", source=source
        )
    return value


def require_list(value: Any, what: str, source: str) -> list[Any]:
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise TraceRecordError(f"{what} must be a list, got {type(value).__name__}", source=source)
    return list(value)
