"""Trace batches written the way users have them: JSON Lines of metrics records."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def refund_batch(tmp_path: Path, specs_dir: Path) -> Callable[..., Path]:
    """``make(pattern)``: a runs.jsonl of the shipped passing (p), failing (f) and
    tool-error (e: the first lookup_order returned an error) refund runs."""

    def make(pattern: str, name: str = "runs.jsonl") -> Path:
        good = json.loads((specs_dir / "traces/refund.pass.json").read_text())
        bad = json.loads((specs_dir / "traces/refund.fail.json").read_text())
        lines = []
        for i, kind in enumerate(pattern):
            record = json.loads(json.dumps(good if kind in "pe" else bad))
            record["model"] = "m-even" if i % 2 == 0 else "m-odd"
            if kind == "e":
                record["tool_calls"][0]["is_error"] = True
            lines.append(json.dumps(record))
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        return path

    return make
