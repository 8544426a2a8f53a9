"""A bare stdio MCP server (JSON lines, no SDK) for the gateway's embedded-read tests:
``resources/read`` of ``docs://`` (a directory) answers with every file under it,
``secret`` included; the tool ``ask_model`` sends the client a ``sampling/createMessage``
whose tool result embeds ``docs://secret`` whole. Every message it receives from the
proxy is appended to the file named by ``SHOP_RECORD``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

SECRET = "sk-live-TOPSECRET"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _answer(mid: Any, method: str | None, params: dict[str, Any]) -> None:
    if method == "initialize":
        version = params.get("protocolVersion", "2025-06-18")
        capabilities = {"tools": {}, "resources": {}}
        info = {"name": "raw-docs", "version": "1"}
        result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
        send({"jsonrpc": "2.0", "id": mid, "result": result})
    elif method == "tools/list":
        tools = [{"name": "ask_model", "inputSchema": {"type": "object", "properties": {}}}]
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
    elif method == "resources/read":
        uri = params["uri"]
        contents = [
            {"uri": "docs://readme", "mimeType": "text/plain", "text": "public readme"},
            {"uri": "docs://secret", "mimeType": "text/plain", "text": SECRET},
        ]
        if uri != "docs://":
            contents = [c for c in contents if c["uri"] == uri]
        send({"jsonrpc": "2.0", "id": mid, "result": {"contents": contents}})
    elif method == "tools/call":
        embedded = {"type": "resource", "resource": {"uri": "docs://secret", "text": SECRET}}
        tool_result = {"type": "tool_result", "toolUseId": "u1", "content": [embedded]}
        sampling = {"maxTokens": 50, "messages": [{"role": "user", "content": [tool_result]}]}
        send({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": sampling})
        result = {"content": [{"type": "text", "text": "asked"}], "isError": False}
        send({"jsonrpc": "2.0", "id": mid, "result": result})


def main() -> None:
    record = os.environ.get("SHOP_RECORD")
    for line in sys.stdin:
        message = json.loads(line)
        if record:
            with open(record, "a", encoding="utf-8") as out:
                out.write(line if line.endswith("\n") else line + "\n")
        if "method" in message and "id" in message:
            _answer(message["id"], message["method"], message.get("params") or {})


if __name__ == "__main__":
    main()
