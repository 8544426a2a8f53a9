"""``agentguard audit verify`` on real firewall logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.cli.main import main
from tests.enforcement.test_audit import KEY, read, write_run


def test_intact_log_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An intact appended log exits 0 and prints each run's head hash."""
    log = tmp_path / "d.jsonl"
    write_run(log, run_id="r1")
    write_run(log, run_id="r2")
    assert main(["audit", "verify", str(log)]) == 0
    out = capsys.readouterr().out
    assert "intact" in out and "run r1: head" in out and "run r2: head" in out


def test_edited_line_exits_one_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Changing a blocked call's action to allow is caught at the next line."""
    log = tmp_path / "d.jsonl"
    write_run(log)
    lines = read(log)
    assert '"action":"block"' in lines[0]
    lines[0] = lines[0].replace('"action":"block"', '"action":"allow"')
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["audit", "verify", str(log)]) == 1
    assert f"{log}:2: run" in capsys.readouterr().err


def test_key_file_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--key-file checks the HMACs; --json prints the result document."""
    log = tmp_path / "d.jsonl"
    write_run(log, key=KEY)
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY + b"\n")
    assert main(["audit", "verify", str(log), "--key-file", str(key_file), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and doc["macs_checked"] is True
    assert main(["audit", "verify", str(log), "--key", "wrong"]) == 1


def test_missing_log_and_required_finish(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file is misuse (2); a truncated run fails --require-finish (1)."""
    assert main(["audit", "verify", str(tmp_path / "nope.jsonl")]) == 2
    log = tmp_path / "d.jsonl"
    write_run(log)
    lines = read(log)
    log.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    assert main(["audit", "verify", str(log)]) == 0
    assert main(["audit", "verify", str(log), "--require-finish"]) == 1
    assert "without a finish line" in capsys.readouterr().err
