"""``agentguard mcp-proxy`` starts a stdio server before it imports and checks anything
(so the two get ready together: ``benchmarks/mcp_gateway.py``), and nothing else about
serving changes: a spec that does not parse still stops the proxy before it serves,
naming file, line and column, and the server it started is stopped with it, whatever
the server does on the end of its input."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

EXIT_WITHIN = 60.0
"""A bound on a hang, not a speed goal."""

LINGERING = (
    "import os, signal, sys, time\n"
    "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
    "if sys.argv[2] == 'stubborn': signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "sys.stdin.read()\n"  # the end of its input does not make it exit
    "time.sleep(120)\n"
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("server", ["lingering", "stubborn"])
def test_a_bad_spec_stops_the_server_started_early(tmp_path: Path, server: str) -> None:
    """A syntax error is said with file:line:column and exit 2 before anything is served;
    the server, started already, is stopped: SIGTERM after its input's end is ignored,
    SIGKILL after SIGTERM is ignored (``stubborn``)."""
    bad = tmp_path / "bad.ltl"
    bad.write_text("spec s\nconstraint c\n  := G (wipe\n")
    pid_file = tmp_path / "server.pid"
    command = [sys.executable, "-c", LINGERING, str(pid_file), server]
    proxy = subprocess.run(
        [sys.executable, "-m", "agentguard", "mcp-proxy", str(bad), "--", *command],
        input="",
        capture_output=True,
        text=True,
        timeout=EXIT_WITHIN,
    )
    assert proxy.returncode == 2
    assert f"{bad}:3:13: syntax error" in proxy.stderr and "Traceback" not in proxy.stderr
    assert proxy.stdout == ""  # nothing was served
    if pid_file.exists():  # (else it was stopped before it even got that far)
        pid = int(pid_file.read_text())
        assert _gone_within(pid, 10), "the server outlived the proxy"


@pytest.mark.parametrize("entry", ["module", "script"])
def test_the_server_starts_before_anything_heavy_is_imported(tmp_path: Path, entry: str) -> None:
    """Whatever is imported before the server starts delays the client's ``initialize``:
    by then neither the errors (dataclasses, inspect) nor logging, the SDK or the
    firewall is loaded, through ``python -m agentguard`` and the console script alike."""
    spec = tmp_path / "s.ltl"
    spec.write_text("spec s\nconstraint c := G !x\n")
    probe = (
        "import sys\n"
        "from agentguard.integrations import _mcp_process\n"
        "def start(command, env=None, cwd=None):\n"
        "    heavy = {'dataclasses', 'logging', 'inspect', 'mcp', 'pydantic', 'numpy',\n"
        "             'agentguard.errors', 'agentguard.enforcement', 'agentguard.cli.main'}\n"
        "    print(sorted(heavy & set(sys.modules)), file=sys.stderr)\n"
        "    raise SystemExit(0)\n"
        "_mcp_process.start = start\n"
        f"sys.argv = ['agentguard', 'mcp-proxy', {str(spec)!r}, '--', 'server']\n"
    )
    if entry == "module":
        probe += "import runpy\nrunpy.run_module('agentguard', run_name='__main__')\n"
    else:
        probe += "from agentguard.cli.launch import main\nmain()\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=EXIT_WITHIN
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
