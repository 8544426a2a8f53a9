"""Traces: the recorded (or proposed) sequence of tool calls a spec is checked against."""

from agentguard.trace.formats import detect_format, format_names
from agentguard.trace.formats.openai_chat import from_openai_messages
from agentguard.trace.loaders import LoadedTrace, iter_trace_file, load_traces, trace_from_json
from agentguard.trace.model import UNKNOWN, Call, Trace, Unknown

__all__ = [
    "UNKNOWN",
    "Call",
    "LoadedTrace",
    "Trace",
    "Unknown",
    "detect_format",
    "format_names",
    "from_openai_messages",
    "iter_trace_file",
    "load_traces",
    "trace_from_json",
]
