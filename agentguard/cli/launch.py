"""The ``agentguard`` command's entry point (``python -m agentguard`` too): ``mcp-proxy``
first, before anything else is imported.

An MCP client starts ``agentguard mcp-proxy ... -- SERVER`` and waits for the server's
answer to ``initialize``; the proxy starts the server before it loads anything heavy
(:mod:`agentguard.cli.mcp_proxy`), so every millisecond spent importing before that is
added to the client's wait. The full CLI (:mod:`agentguard.cli.main`: its parser, its
commands' modules, the errors) is imported only for the other commands.
"""

from __future__ import annotations

import sys


def main() -> int:
    words = sys.argv[1:]
    if words[:1] == ["mcp-proxy"]:
        from agentguard.cli import mcp_proxy

        return mcp_proxy.main(words[1:])
    from agentguard.cli.main import main as full

    return full(words)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
