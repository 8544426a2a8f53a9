"""Call records (Appendix A.1.2, ``{tool_name, arguments, tool_result}``) read into
columns: one list per field, position ``i`` of each being call ``i``.

Reading a corpus spends its time per record, so records are read a column at a time.
A trace whose records are all plain JSON objects with the canonical keys (the shape
every agentguard writer and the paper use) takes the *plain* path: each field is pulled
out of every record by one C-level ``map``, and checked by the set of types it holds,
not record by record; the keys are checked by counting them, and each name is checked
and coded by one lookup in the table of names already accepted. Any other trace (other spellings, ``kind``, ``status``, arguments
as JSON text, a record that is not an object, a bad name) is read record by record, and
that path gives every error its record number. Both paths give the same columns; a
property test holds them to it.

A file of many traces (JSON Lines of metrics records) is read with its traces laid end
to end (:func:`read_call_record_lists`): the plain path's checks and the tool coding run
once per chunk of a few thousand records, and each trace's columns are slices of its
chunk's, so a short trace costs a few slices, not a pass of its own (and its count of
final answers, for ``num_tool_calls``, a subtraction). A column no record of a chunk
fills (no arguments, no results) is None rather than a list of blanks.

The columns do not import the trace model (which builds on them): the model turns them
into :class:`~agentguard.trace.model.Call` objects only when a call is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any, Final

import numpy as np

from agentguard.errors import TraceRecordError
from agentguard.trace._slots import slot_builder
from agentguard.trace.call_fields import (
    DIALOGUE_NAMES,
    MESSAGE_NAMES,
    UNKNOWN,
    CallKind,
    Unknown,
    call_arguments,
)
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.mcp_content import mcp_result
from agentguard.trace.tool_codes import Codes, ToolCodes, tool_code


@dataclass(frozen=True, slots=True)
class CallColumns:
    """The fields of a trace's calls, a list per field.

    Values are as the records hold them: an argument object is copied (and None made
    ``{}``) when its call is built, and a result given as JSON text is decoded then, by
    the call itself as wherever a call is built. So a record's objects must not be
    changed while the trace is in use (loaders own what they parse).
    """

    names: tuple[str, ...]
    args: list[Mapping[str, Any] | None] | None
    """None when no call has arguments (each is ``{}``)."""
    results: list[Any] | None
    """None when no call has a result (each is ``UNKNOWN``)."""
    tools: ToolCodes | None
    """The tool sequence as integers, for bulk scoring (None: a name past the table)."""
    errors: list[bool] | None = None
    """None when no call is a tool error."""
    kinds: list[CallKind] | None = None
    """None when every position is a tool call (no dialogue event)."""
    finals: int | None = None
    """How many calls are to the default final tools (``FINAL_TOOLS``), when the reader
    counted them for a whole chunk at once; None: counted when asked."""

    def error_positions(self) -> list[int]:
        """Positions of the calls recorded as tool errors."""
        return [] if self.errors is None else [i for i, e in enumerate(self.errors) if e]

    def tool_call_count(self, final_tools: Iterable[str] = FINAL_TOOLS) -> int:
        """``num_tool_calls``: tool calls that are not final answers (as
        :func:`agentguard.trace.final_tool.count_tool_calls` counts calls)."""
        if self.kinds is None:
            if final_tools is FINAL_TOOLS and self.finals is not None:
                return len(self.names) - self.finals
            final = final_tools if final_tools is FINAL_TOOLS else frozenset(final_tools)
            return len(self.names) - sum(map(self.names.count, final))
        final = final_tools if final_tools is FINAL_TOOLS else frozenset(final_tools)
        return sum(
            1 for n, k in zip(self.names, self.kinds, strict=True) if k == "tool" and n not in final
        )


_call_columns = slot_builder(CallColumns)
_tool_codes = slot_builder(ToolCodes)

NAME_KEYS: Final = ("tool_name", "name", "tool")
"""Spellings of the tool's name, first found wins."""
ARG_KEYS: Final = ("arguments", "args", "input", "tool_input")
RESULT_KEYS: Final = ("tool_result", "result", "output", "observation")

_READ_KEYS: Final = (*NAME_KEYS, *RESULT_KEYS, "is_error", "status", "kind")
"""The keys a record is read by besides its arguments' (an object under any other key,
with no arguments, is refused: :func:`~agentguard.trace.call_fields.call_arguments`)."""
_PLAIN_KEYS: Final = frozenset({"tool_name", "arguments", "tool_result", "is_error"})
"""The keys of a record the plain path reads (``Call.to_record`` writes no others for a
tool call)."""
_PLAIN_RESULTS: Final = frozenset(
    {str, int, float, bool, type(None), list, dict, Unknown}
)  # the types JSON gives (and UNKNOWN for a record without a result)
_TOOL_NAME: Final = itemgetter("tool_name")
_ARGUMENTS: Final = itemgetter("arguments")
_RESULT: Final = itemgetter("tool_result")


def read_call_records(records: Iterable[Any], source: str) -> CallColumns:
    """The columns of ``records``; a record that cannot be read raises
    :class:`TraceRecordError` naming it (``tool call 3 ...``, 0-based)."""
    rows = records if type(records) is list else list(records)
    plain = _read_plain(rows)
    return plain if plain is not None else _read_each(rows, source)


def read_call_record_lists(
    lists: Sequence[list[Any]], *, json_rows: bool = False
) -> list[CallColumns | None]:
    """The columns of each list of records, read in chunks of lists laid end to end (see
    the module docstring); None for the lists of a chunk holding a record that is not
    plain (read each of them by :func:`read_call_records`, which names the bad record).
    The columns equal those :func:`read_call_records` gives each list alone.
    ``json_rows``: the records were parsed from JSON (see :func:`_read_plain`)."""
    out: list[CallColumns | None] = []
    first = 0
    while first < len(lists):
        last, size = first, 0
        while last < len(lists) and size < CHUNK_RECORDS:
            size += len(lists[last])
            last += 1
        out.extend(_read_chunk(lists[first:last], json_rows))
        first = last
    return out


CHUNK_RECORDS: Final = 4096
"""Records read as one: enough to spread the fixed cost of a read over many short traces,
few enough that the passes over them stay in the processor's cache."""


def _read_chunk(lists: Sequence[list[Any]], json_rows: bool) -> list[CallColumns | None]:
    rows: list[Any] = []
    for records in lists:  # a copy of each list's pointers: cheaper than a chain's pass
        rows += records
    whole = _read_plain(rows, json_rows=json_rows)
    if whole is None or whole.tools is None:  # a full code table: each trace is coded alone
        return [None] * len(lists)
    names, args, results, errors = whole.names, whole.args, whole.results, whole.errors
    codes = whole.tools.codes
    finals = _finals_before(codes)
    out: list[CallColumns | None] = []
    start = 0
    for records in lists:
        end = start + len(records)
        sequence = names[start:end]
        part = None
        if errors is not None:
            part = errors[start:end]
            if True not in part:
                part = None
        out.append(
            _call_columns(
                sequence,
                None if args is None else args[start:end],
                None if results is None else results[start:end],
                _tool_codes(sequence, codes[start:end]),
                part,
                None,
                0 if finals is None else finals[end] - finals[start],
            )
        )
        start = end
    return out


def _finals_before(codes: Codes) -> list[int] | None:
    """``out[i]``: the calls to a default final tool before position ``i`` (and at the
    end); None when the chunk has none (each trace's count is then 0)."""
    final_codes = [c for c in map(tool_code, FINAL_TOOLS) if c is not None]
    if not final_codes:
        return None
    is_final = np.isin(codes, final_codes)
    if not is_final.any():
        return None
    out: list[int] = [0, *np.cumsum(is_final).tolist()]
    return out


def _read_plain(rows: list[Any], *, json_rows: bool = False) -> CallColumns | None:
    """The columns when every record has the plain shape, else None (read them one by one).

    ``json_rows``: the records come from a JSON parser, so each is an exact ``dict`` or
    no mapping at all (which taking the names already tells apart) and is not checked
    for its type first, its fields are looked up by the parser's own key objects
    (:func:`_json_getters`), and its result is of a type JSON gives (not checked). The
    keys are checked by counting them: when the records hold as many keys as the name
    and the argument and result keys that every record has, no record has another key;
    only otherwise is every key looked at.
    """
    n = len(rows)
    if not n:
        return CallColumns((), None, None, ToolCodes.of(()))
    if json_rows:
        tool_name, arguments, tool_result = _json_getters(rows[0])
    elif set(map(type, rows)) != {dict}:
        return None
    else:
        tool_name, arguments, tool_result = _TOOL_NAME, _ARGUMENTS, _RESULT
    try:
        names: list[Any] = list(map(tool_name, rows))
    except (KeyError, TypeError):  # a record without a name (or, from JSON, not an object)
        return None
    tools = _plain_tools(names)
    if isinstance(tools, _NotPlain):
        return None  # a missing, empty, non-string or dialogue name: the per-record path names it
    extra = sum(map(len, rows)) - n  # keys other than the name
    counted = 0  # of those, the keys of the columns every record has
    args: list[Mapping[str, Any] | None] | None = None
    results: list[Any] | None = None
    every_args = every_result = False
    result_dicts = False  # whether some result is an object or a list (an MCP result?)
    if extra:
        try:
            args, every_args = list(map(arguments, rows)), True
        except KeyError:  # some record has none
            args = list(map(dict.get, rows, repeat("arguments")))
        if not _plain_args(args):
            return None  # JSON text (decoded record by record), or not an object (an error)
        try:
            results, every_result = list(map(tool_result, rows)), True
        except KeyError:
            results = list(map(dict.get, rows, repeat("tool_result"), repeat(UNKNOWN)))
        result_types = set(map(type, results))
        if not json_rows and not result_types <= _PLAIN_RESULTS:
            return None
        result_dicts = dict in result_types or list in result_types
        counted = n * (every_args + every_result)
    errors: list[bool] | None = None
    if extra == counted:  # no other key: a column not every record has, none has
        if not every_args:
            args = None
        if not every_result:
            results = None
    else:
        keys: set[str] = set().union(*rows)
        if not keys <= _PLAIN_KEYS:
            return None
        if "arguments" not in keys:
            args = None
        if "tool_result" not in keys:
            results = None
        if "is_error" in keys:
            errors = [r.get("is_error") is True for r in rows]
    if results is not None and result_dicts:
        for i, result in enumerate(results):
            if (type(result) is dict and "content" in result) or (
                type(result) is list and result and type(result[0]) is dict
            ):  # an MCP CallToolResult, or its bare content list?
                results[i], mcp_error = mcp_result(result)
                if mcp_error is True:
                    errors = errors if errors is not None else [False] * n
                    errors[i] = True
    if errors is not None and True not in errors:
        errors = None
    return _plain_columns(names, tools, args, results, errors)


_NONE_TYPE: Final = type(None)


def _plain_args(args: list[Any]) -> bool:
    """Whether every argument is an object or None: the types listed and counted, a
    quarter cheaper than collecting them in a set."""
    types = list(map(type, args))
    plain = types.count(dict)
    return plain == len(types) or plain + types.count(_NONE_TYPE) == len(types)


def _plain_columns(
    names: list[Any],
    tools: Codes | None,
    args: list[Mapping[str, Any] | None] | None,
    results: list[Any] | None,
    errors: list[bool] | None,
) -> CallColumns:
    sequence = tuple(names)
    codes = None if tools is None else _tool_codes(sequence, tools)
    return _call_columns(sequence, args, results, codes, errors, None, None)


def _json_getters(row: Any) -> tuple[itemgetter[Any], itemgetter[Any], itemgetter[Any]]:
    """The getters of the name, arguments and result of records parsed from JSON, by the
    key objects of ``row``, one of them, where it has those keys.

    The parser gives every record of a text the same object for the same key (``orjson``
    caches its keys), and a dict finds the very object it holds without comparing the
    text of the key: about a fifth of each lookup.
    """
    if type(row) is not dict:
        return _TOOL_NAME, _ARGUMENTS, _RESULT
    own = {key: key for key in row if type(key) is str}
    if not own:
        return _TOOL_NAME, _ARGUMENTS, _RESULT
    return (
        itemgetter(own.get("tool_name", "tool_name")),
        itemgetter(own.get("arguments", "arguments")),
        itemgetter(own.get("tool_result", "tool_result")),
    )


class _NotPlain:
    """Type of :data:`_NOT_PLAIN`."""


_NOT_PLAIN: Final = _NotPlain()
"""What :func:`_plain_tools` gives for a name the plain path does not read."""

_PLAIN_NAME_CODES: dict[str, int] = {}
"""The code of every name the plain path has accepted (a non-empty ``str``, not a dialogue
name, with a code): one lookup per call both checks its name and codes it. Bounded as the
code table is."""


def _plain_tools(names: list[Any]) -> Codes | _NotPlain | None:
    """The codes of ``names`` when all are plain tool names; None when one is but the
    code table is full (the columns are left uncoded, as :class:`ToolCodes` does)."""
    try:
        known = _known_codes(names)
    except (KeyError, TypeError):  # a name not accepted yet, or one not hashable
        pass
    else:
        try:  # as bytes while every code is below 256 (most runs' tools): a cheaper pass
            return np.frombuffer(bytes(known), dtype=np.uint8).astype(np.int32)
        except ValueError:  # a code past 255
            return np.array(known, dtype=np.int32)
    try:
        distinct = set(names)
    except TypeError:
        return _NOT_PLAIN
    if not all(type(name) is str and name for name in distinct):
        return _NOT_PLAIN
    if not DIALOGUE_NAMES.isdisjoint(distinct):
        return _NOT_PLAIN
    coded = ToolCodes.of(names, distinct)
    if coded is None:
        return None
    for name in distinct:
        code = tool_code(name)
        if code is not None:
            _PLAIN_NAME_CODES[name] = code
    return coded.codes


def _known_codes(names: list[Any]) -> tuple[int, ...]:
    """The code of each name from the table of accepted names (KeyError: one is not
    there yet). One ``itemgetter`` of all the names looks each up in a single C loop,
    about a quarter cheaper than a ``map`` of the table's ``get``."""
    if len(names) > 1:
        return itemgetter(*names)(_PLAIN_NAME_CODES)  # type: ignore[no-any-return]
    return tuple(_PLAIN_NAME_CODES[name] for name in names)  # (one name: no tuple from it)


def _read_each(rows: list[Any], source: str) -> CallColumns:
    fields = [_read_one(record, index, source) for index, record in enumerate(rows)]
    names = tuple(f[0] for f in fields)
    errors = [f[3] for f in fields]
    kinds: list[CallKind] = [f[4] for f in fields]
    return CallColumns(
        names,
        [f[1] for f in fields],
        [f[2] for f in fields],
        ToolCodes.of(names),
        errors if True in errors else None,
        kinds if any(k != "tool" for k in kinds) else None,
    )


def _read_one(
    record: Any, index: int, source: str
) -> tuple[str, dict[str, Any], Any, bool, CallKind]:
    """``(name, args, result, error, kind)`` of one record."""
    if not isinstance(record, Mapping):
        raise TraceRecordError(
            f"tool call {index} must be an object, got {type(record).__name__}", source=source
        )
    name = next((record[k] for k in NAME_KEYS if k in record), None)
    if not isinstance(name, str) or not name:
        raise TraceRecordError(f"tool call {index} has no 'tool_name' string", source=source)
    arg_key = next((k for k in ARG_KEYS if k in record), ARG_KEYS[0])
    args = call_arguments(record, arg_key, (*_READ_KEYS, arg_key), f"record {index}", source)
    result: Any = next((record[k] for k in RESULT_KEYS if k in record), UNKNOWN)
    error = record.get("is_error") is True or record.get("status") == "error"
    kind = _kind_of(record, name, index, source)
    if kind == "tool" and (  # an MCP CallToolResult, or its bare content list?
        (isinstance(result, Mapping) and "content" in result) or isinstance(result, list)
    ):
        result, mcp_error = mcp_result(result)
        error = error or mcp_error is True
    return name, args, result, error, kind


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
