"""The real MCP Inspector (npm ``@modelcontextprotocol/inspector``, CLI mode) drives
``agentguard mcp-proxy`` in the documented form (``mcp-proxy SPEC --log F -- COMMAND``;
the Inspector drops the first ``--`` it is given): a refused ``tools/call`` is answered
with agentguard's refusal and never reaches the server, an allowed one returns the
server's own answer, as the Inspector gets it from the server directly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.mcp_servers.npm import npm_server

pytest.importorskip("mcp")

HERE = Path(__file__).parent / "mcp_servers"
SHOP = [sys.executable, str(HERE / "shop.py")]


def _inspector(server: list[str], record: Path, tool: str, *args: str) -> Any:
    """The Inspector's output (JSON) for one ``tools/call`` of ``tool`` on ``server``."""
    try:
        inspector = npm_server("mcp-inspector")
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"the MCP Inspector is not available: {exc}")
    options = ["--method", "tools/call", "--tool-name", tool]
    options += [word for arg in args for word in ("--tool-arg", arg)]
    done = subprocess.run(
        [*inspector, "--cli", *options, "-e", f"SHOP_RECORD={record}", *server],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    start = done.stdout.index("{")  # (after its own "Starting ..." line, if any)
    return json.JSONDecoder().raw_decode(done.stdout[start:])[0]


def test_the_inspector_through_the_proxy(tmp_path: Path) -> None:
    """Refused: the refusal, and the server never ran it; allowed: the server's answer."""
    record = tmp_path / "ran.jsonl"
    log = tmp_path / "decisions.jsonl"
    spec = str(HERE / "shop.ltl")
    proxy = [sys.executable, "-m", "agentguard", "mcp-proxy", spec, "--log", str(log), "--"]
    refused = _inspector([*proxy, *SHOP], record, "issue_refund", "order_id=A1", "amount=5")
    assert refused["isError"] is True
    assert "agentguard blocked this call" in refused["content"][0]["text"]
    assert not record.exists() or record.read_text() == ""
    allowed = _inspector([*proxy, *SHOP], record, "lookup_order", "order_id=A1")
    assert [json.loads(line)["tool"] for line in record.read_text().splitlines()] == [
        "lookup_order"
    ]
    assert allowed == _inspector(SHOP, tmp_path / "direct.jsonl", "lookup_order", "order_id=A1")
    assert log.read_text()  # the proxy logged its decisions
