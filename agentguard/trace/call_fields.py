"""What the fields of a call may hold: its kind and the reserved dialogue names, the
:data:`UNKNOWN` result of a call that has not run, and the JSON decoding of arguments
and results.

A leaf (it imports only the errors): the trace model, the MCP result unwrapping and the
call-record reader all build on this vocabulary, so none of them imports another to get
it and the imports never loop.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any, Final, Literal

from agentguard.errors import TraceRecordError
from agentguard.trace.json_text import json_reader

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
        if not value:
            return value
        first = value[0]  # most results are plain text: one look at the first character
        if first not in JSON_START and not first.isspace():
            return value
        text = value.strip()
        if text[:1] in ("{", "[") or text in ("true", "false", "null") or _looks_numeric(text):
            try:  # orjson where it reads the text as json.loads does (json_text.py)
                return json_reader(text)(text)
            except ValueError:
                return value
    return value


JSON_START: Final = frozenset("{[tfn-0123456789")
"""The first characters of the JSON texts :func:`decode_result` decodes (after spaces)."""


def _looks_numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))


def decode_args(raw: Any, where: str, source: str) -> dict[str, Any]:
    """Arguments as a dict: JSON text is decoded, None is ``{}``, anything else is an error.

    The one decoder of every loader (call records, the trace formats in ``formats``);
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


def call_arguments(
    call: Mapping[str, Any], key: str, read: Collection[str], where: str, source: str
) -> dict[str, Any]:
    """The arguments of one tool-call record: ``call[key]`` decoded by :func:`decode_args`.

    A reader never loses a call's arguments: when there are none under ``key`` (absent,
    null, empty) and another key of the record, one the reader does not read (``read``
    lists the keys it knows), holds an object or the JSON text of one, the arguments may
    be there and the record is refused with :class:`TraceRecordError` naming it and that
    key, never read as ``{}`` (an AgentDojo call, ``{"function", "args"}``, read as a chat
    message had every argument dropped and every argument test pass).
    """
    args = decode_args(call.get(key), where, source)
    if not args:
        other = unread_arguments(call, read)
        if other is not None:
            raise TraceRecordError(
                f"{where or 'a tool call'}: no arguments under {key!r}, but an object "
                f"under {other!r}, which this format does not read; the call's arguments "
                "are not guessed (read the file in its own format, or move them to "
                f"{key!r})",
                source=source,
            )
    return args


def unread_arguments(call: Mapping[str, Any], read: Collection[str]) -> str | None:
    """The first key of ``call`` outside ``read`` whose value is a non-empty object or the
    JSON text of one (where a call's arguments could be); None when there is none."""
    for name, value in call.items():
        if name in read:
            continue
        if isinstance(value, Mapping):
            if value:
                return str(name)
        elif isinstance(value, str) and value.lstrip()[:1] == "{":
            try:
                decoded = json.loads(value)
            except ValueError:
                continue
            if isinstance(decoded, Mapping) and decoded:
                return str(name)
    return None


__all__ = [
    "ASSISTANT_MESSAGE",
    "DIALOGUE_NAMES",
    "JSON_START",
    "MESSAGE_NAMES",
    "UNKNOWN",
    "USER_MESSAGE",
    "CallKind",
    "Unknown",
    "call_arguments",
    "decode_args",
    "decode_result",
    "unread_arguments",
]
