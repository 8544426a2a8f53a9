"""`agentguard pec --jobs N`: replays on a process pool give the serial results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.cli.main import main

TOOLS = [
    {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"],
        },
    }
]


def test_pec_jobs_equals_serial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON report and exit code of `pec --jobs 2` equal the serial run's."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    lines = []
    for k in range(24):
        args = [{"a": 1}, {"a": "x"}, {}][k % 3]
        calls = [{"tool_name": "add", "arguments": {"a": 2}}] * (k % 4) + [
            {"tool_name": "add" if k % 5 else "sub", "arguments": args}
        ]
        lines.append(
            json.dumps(
                {"task_id": str(k), "method": f"m{k % 2}", "success": k % 3 == 0, "calls": calls}
            )
        )
    episodes = tmp_path / "e.jsonl"
    episodes.write_text("\n".join(lines) + "\n")
    argv = ["pec", str(episodes), "--tools", str(tools), "--json", "--resamples", "200"]
    serial_code = main(argv)
    serial = json.loads(capsys.readouterr().out)
    pooled_code = main([*argv, "--jobs", "2"])
    pooled = json.loads(capsys.readouterr().out)
    assert (pooled_code, pooled) == (serial_code, serial)
    assert sum(g["n"] for g in pooled["groups"]) == 24
