"""Traces: the recorded (or proposed) sequence of tool calls a spec is checked against."""

from agentguard.trace.loaders import iter_trace_file, load_traces, trace_from_json
from agentguard.trace.model import UNKNOWN, Call, Trace, Unknown

__all__ = [
    "UNKNOWN",
    "Call",
    "Trace",
    "Unknown",
    "iter_trace_file",
    "load_traces",
    "trace_from_json",
]
