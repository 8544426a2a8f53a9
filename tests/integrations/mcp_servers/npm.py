"""The MCP servers from npm the gateway's tests start (nobody here wrote them): found
where ``.ci/run`` installs them (``AGENTGUARD_NPM_SERVERS``, else ``.ci-npm`` at the
repository's root), installed there with npm when missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = {
    "mcp-server-filesystem": "@modelcontextprotocol/server-filesystem@2026.8.31",
    "mcp-server-everything": "@modelcontextprotocol/server-everything@2026.8.31",
    # a client, not a server: its CLI mode drives the proxy as users do (112 MB, ~10 s)
    "mcp-inspector": "@modelcontextprotocol/inspector@2.12.0",
}


def npm_server(name: str) -> list[str]:
    """The command that starts the npm program ``name`` (a key of :data:`PACKAGES`)."""
    prefix = Path(os.environ.get("AGENTGUARD_NPM_SERVERS") or ROOT / ".ci-npm")
    program = prefix / "node_modules" / ".bin" / name
    if not program.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"{name} needs Node and npm (apt-get install nodejs npm)")
        subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                *PACKAGES.values(),
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return [str(program)]


if __name__ == "__main__":  # .ci/run installs these: the packages, one a word
    print(" ".join(PACKAGES.values()))
