"""The two lines a firewall writes for almost every call, rendered from byte templates.

An allowed call that violates nothing costs two log lines: its decision (before it runs)
and its result (after). Both are mostly constant: the run, the spec, a row of nulls.
Building a 20-field dict per line and serialising it whole was most of the log's cost
per call, so the constant parts are rendered once per run and only the variable ones
(step, tool, arguments, result, timestamp, chain fields) are serialised per line.

The bytes are exactly what ``orjson.dumps`` makes of the same record
(:meth:`~agentguard.enforcement.log.DecisionLog.decision` builds it as a dict in the
other cases); ``tests/enforcement/test_log_lines.py`` holds the two renderings equal. A
template renders only plain JSON data (:func:`~agentguard.enforcement.audit.plain`): for
anything else it returns None and the caller takes the dict path, whose fallback keeps
``json.dumps(default=str)``'s meaning.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Final

import orjson

from agentguard.enforcement.decision import Action, Decision
from agentguard.trace.json_values import plain
from agentguard.trace.model import Call

_dumps: Final = orjson.dumps
_NULLS: Final = b',"constraint":null,"layer":null,"weight":null,"severity":null,"verdict":null'
_DECISION: Final = (
    b'%s%d,"tool":%s,"args":%s' + _NULLS + b',"action":%s,"message":%s%s%s'
    b'","violations":[],"pending":%s,"escalated":%s,"call_id":%s,"tool_call_id":%s'
    b',"seq":%d,"prev":"%s"}\n'
)
_RESULT: Final = (
    b'%s%s,"tool":%s,"args":%s' + _NULLS + b',"action":"executed","message":""%s%s'
    b'","violations":[],"pending":[],"call_id":%s,"tool_call_id":%s,"is_error":%s'
    b',"position":%d,"result":%s,"seq":%d,"prev":"%s"}\n'
)
_ACTIONS: Final = {a: _dumps(a.value) for a in Action}
_BOOLS: Final = (b"false", b"true")
_TOOLS_KEPT: Final = 1024
"""Tool names whose JSON is kept per run (an agent calls a handful; a run proposing
endless made-up names renders the rest each time, and memory stays bounded)."""

_second: tuple[int, str, str] = (-1, "", "")
"""The last whole second seen, and the two texts of its timestamps (with and without a
fraction: ``isoformat`` leaves out a zero one)."""


def timestamp() -> str:
    """``datetime.now(timezone.utc).isoformat()``, with the date and time of day formatted
    once per second (every log line carries one; isoformat is most of a line's cost)."""
    global _second  # one immutable triple, swapped whole: safe across threads
    ns = time.time_ns()
    seconds = ns // 1_000_000_000
    cached = _second
    if cached[0] != seconds:
        text = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        cached = _second = (seconds, text + ".%06d+00:00", text + "+00:00")
    micros = ns // 1000 % 1_000_000
    return cached[1] % micros if micros else cached[2]


class LineTemplates:
    """The constant parts of one run's decision and result lines, rendered once."""

    __slots__ = ("_decision_head", "_result_head", "_spec", "_tools")

    def __init__(self, run_id: str, spec_name: str | None, spec_hash: str) -> None:
        self._tools: dict[str, bytes] = {}  # a tool's name as JSON: it is on every line
        run = _dumps(run_id)
        self._decision_head = b'{"event":"agentguard.decision","run_id":' + run + b',"step":'
        self._result_head = b'{"event":"agentguard.result","run_id":' + run + b',"step":'
        self._spec = (
            b',"spec":' + _dumps(spec_name) + b',"spec_hash":' + _dumps(spec_hash)
        ) + b',"timestamp":"'

    def decision(self, d: Decision, timestamp: str, seq: int, prev: str) -> bytes | None:
        """The line of ``d``, a decision with no violation, no shadow and no approval
        (None when its arguments are not plain JSON data)."""
        args, step, escalated = d.args, d.step, d.escalated
        if type(args) is not dict or (args and not plain(args)) or type(step) is not int:
            return None
        if type(escalated) is not bool:
            return None
        try:
            message, pending, tool_call_id = d.message, d.pending, d.tool_call_id
            return _DECISION % (
                self._decision_head,
                step,
                self._tool(d.tool),
                _dumps(args) if args else b"{}",
                _ACTIONS[d.action],
                b'""' if message == "" else _dumps(message),
                self._spec,
                timestamp.encode(),
                _dumps(list(pending)) if pending else b"[]",
                _BOOLS[escalated],
                _dumps(d.call_id),
                b"null" if tool_call_id is None else _dumps(tool_call_id),
                seq,
                prev.encode(),
            )
        except TypeError:  # a value orjson does not render (an odd tool-call id)
            return None

    def result(
        self, call: Call, d: Decision | None, timestamp: str, seq: int, prev: str
    ) -> bytes | None:
        """The line of ``call``'s result (``d``: its decision, None for a call recorded
        without one), unredacted (None when its arguments or result are not plain JSON
        data)."""
        args, result, position, is_error = call.args, call.result, call.position, call.error
        step = None if d is None else d.step
        if type(args) is not dict or (args and not plain(args)) or not plain(result):
            return None
        if (step is not None and type(step) is not int) or type(position) is not int:
            return None
        if type(is_error) is not bool:
            return None
        try:
            tool_call_id = None if d is None else d.tool_call_id
            return _RESULT % (
                self._result_head,
                b"null" if step is None else b"%d" % step,
                self._tool(call.name),
                _dumps(args) if args else b"{}",
                self._spec,
                timestamp.encode(),
                b"null" if d is None else _dumps(d.call_id),
                b"null" if tool_call_id is None else _dumps(tool_call_id),
                _BOOLS[is_error],
                position,
                _dumps(result),
                seq,
                prev.encode(),
            )
        except TypeError:  # a value orjson does not render (an odd tool-call id)
            return None

    def _tool(self, tool: str) -> bytes:
        """``tool`` as JSON (raises TypeError, as ``orjson.dumps`` does, for a non-str)."""
        known = self._tools.get(tool) if type(tool) is str else None
        if known is None:
            known = _dumps(tool)
            if type(tool) is str and len(self._tools) < _TOOLS_KEPT:
                self._tools[tool] = known
        return known


__all__ = ["LineTemplates", "timestamp"]
