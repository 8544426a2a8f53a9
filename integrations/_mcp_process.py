"""The MCP server's process, started before anything else (``agentguard mcp-proxy``).

A server over stdio takes a while to answer ``initialize`` (a Python server imports its
SDK, a Node one loads its modules), and so does the proxy before it can relay it (the
SDK, the firewall, the spec). Done one after the other, the client waits for both; so
the command line starts the server first, with this module (the standard library only,
nothing heavy is imported yet), and the proxy gets ready while the server does. Its
pipes are then relayed as the SDK's own stdio client would (:func:`._mcp_upstream.connect`
with ``started``).

The process is started as the SDK starts one (its own session and process group, its
stderr the proxy's), and stopped as the SDK stops one, here without an event loop, for a
proxy that stops before it serves (an invalid spec): its stdin is closed, then the group
is sent SIGTERM, then SIGKILL, each after a grace period.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Final

EXIT_GRACE: Final = 2.0
"""Seconds a server may take to exit on its own once its stdin is closed (as the SDK)."""
TERM_GRACE: Final = 2.0
"""Seconds its process group has after SIGTERM before SIGKILL (as the SDK)."""

Started = subprocess.Popen[bytes]
"""A server process started by :func:`start` (its stdin and stdout are pipes)."""


def start(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Started:
    """Start the server ``command``; raises ``OSError`` when it cannot be started."""
    return subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        env=None if env is None else dict(env),
        cwd=cwd,
        start_new_session=sys.platform != "win32",
        bufsize=0,
    )


def stop(process: Started, *, pipes: bool = True) -> None:
    """Stop ``process`` and its group (see the module); nothing if it is gone already.
    ``pipes``: close its stdout too (not when an event loop's transport owns it)."""
    with suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(EXIT_GRACE)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(TERM_GRACE)
        except subprocess.TimeoutExpired:
            _signal_group(process, getattr(signal, "SIGKILL", signal.SIGTERM))
            process.wait()
    if pipes and process.stdout is not None:
        with suppress(OSError):
            process.stdout.close()


def _signal_group(process: Started, signum: int) -> None:
    """Signal the server's process group (its own: it was started in a new session)."""
    with suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":  # pragma: no cover - the CI runs on Linux
            process.send_signal(signum)
        else:
            os.killpg(process.pid, signum)


__all__ = ["EXIT_GRACE", "TERM_GRACE", "Started", "start", "stop"]
