"""Claude Code session transcripts (JSON lines of typed entries)."""

from __future__ import annotations

from agentguard.trace.loaders import load_traces
from tests.trace.formats.conftest import FIXTURES


def test_session_file_is_one_trace_without_sidechains() -> None:
    """User/assistant entries form one trace; summary, system and sidechain entries are skipped."""
    (loaded,) = load_traces(FIXTURES / "claude_code_session.jsonl")
    assert loaded.format == "claude-code" and loaded.trace is not None
    t = loaded.trace
    assert t.names == ("Read", "Bash", "final_answer")
    assert t[0].args == {"file_path": "/home/u/shop/orders/A1.json"}
    assert t[1].result == "bash: ./refund: Permission denied" and t.tool_errors == {1}
    assert t.metrics["session_id"] == "95e6f011-ec33-4b37-91ad-5d242b40ae3d"
