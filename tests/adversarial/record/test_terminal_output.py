"""A log or trace cannot drive the terminal of whoever checks it: control characters,
bidirectional overrides and rich markup in tool names, run ids or values are printed as
escapes by ``check``, ``audit verify`` and the error messages (a log used to clear the
screen and print a fake verdict)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentguard as ag
from agentguard.enforcement.firewall import Firewall

HOSTILE = "\x1b[2J\x1b[H[green]ALL CLEAR[/]\x07\r\u202eevil\x9b31m"


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "agentguard", *args], capture_output=True, timeout=120, check=False
    )


def _clean(output: bytes) -> None:
    text = output.decode("utf-8")
    for char in ("\x1b", "\x07", "\r", "\u202e", "\x9b"):
        assert char not in text, repr(char)


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.ltl"
    path.write_text("constraint c := G !never\n")
    return path


def test_check_escapes_a_tool_name(tmp_path: Path, spec_file: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps({"tool_name": HOSTILE, "arguments": {}}) + "\n")
    done = _cli("check", str(spec_file), str(trace))
    _clean(done.stdout)
    assert b"\\x1b[2J" in done.stdout and b"[green]ALL CLEAR[/]" in done.stdout
    _clean(_cli("check", str(spec_file), str(trace), "--json").stdout)


def test_errors_escape_what_they_quote(tmp_path: Path, spec_file: Path) -> None:
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({HOSTILE: 1}))
    done = _cli("check", str(spec_file), str(trace))
    _clean(done.stderr)
    assert b"\\x1b" in done.stderr


def test_audit_verify_escapes_run_ids(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    fw = Firewall(ag.parse_spec("constraint c := G !never\n"), log_path=log, run_id=HOSTILE)
    fw.finish()
    ok = _cli("audit", "verify", str(log))
    assert ok.returncode == 0
    _clean(ok.stdout)
    lines = log.read_text().splitlines()
    broken = tmp_path / "e.jsonl"
    broken.write_text("\n".join([lines[0], lines[0]]) + "\n")
    bad = _cli("audit", "verify", str(broken))
    assert bad.returncode == 1
    _clean(bad.stderr)
    _clean(_cli("audit", "verify", str(log), "--json").stdout)


def test_the_helpers_keep_meaning() -> None:
    """Escaping shows every character; the JSON form is the same document."""
    from agentguard.terminal import json_text, markup, printable

    assert printable("a\x1bb") == "a\\x1bb"
    assert printable("line\nnext", one_line=False) == "line\nnext"
    assert printable("\udce9") == "\\udce9"
    assert markup("[red]x[/]") == "\\[red]x\\[/]"
    doc = {"k": HOSTILE}
    assert json.loads(json_text(doc)) == doc
