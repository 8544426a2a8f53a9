"""`agentguard check` on batches: --by, --summary, --fail-under, the fixed JSON shape,
the progress bar on a terminal, and a forced --format that fits nothing."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from agentguard.cli.main import EXIT_INPUT, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main

TOP_KEYS = {"schema", "spec", "traces", "summary", "by", "groups", "fail_under"}
ITEM_KEYS = {"source", "record", "label", "format", "error", "report", "unjudged"}


def _runs(tmp_path: Path, specs_dir: Path, pattern: str, **extra: str) -> Path:
    """A JSON Lines file of the shipped passing (p) and failing (f) refund runs, each line
    tagged with a ``model`` metrics field taken from ``extra`` by position."""
    good = json.loads((specs_dir / "traces/refund.pass.json").read_text())
    bad = json.loads((specs_dir / "traces/refund.fail.json").read_text())
    models = extra.get("models", "")
    lines = []
    for i, kind in enumerate(pattern):
        record = dict(good if kind == "p" else bad)
        if models:
            record["model"] = models.split(",")[i]
        lines.append(json.dumps(record))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("pattern", ["p", "pf", "pfppf"])
def test_json_shape_does_not_depend_on_the_number_of_traces(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str], pattern: str
) -> None:
    """--json prints one document with the same keys for 1, 2 or 5 traces."""
    runs = _runs(tmp_path, specs_dir, pattern)
    main(["check", "--json", str(specs_dir / "refund.ltl"), str(runs)])
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == TOP_KEYS and doc["schema"] == "agentguard.check/1"
    assert len(doc["traces"]) == len(pattern)
    assert all(set(t) == ITEM_KEYS for t in doc["traces"])
    assert doc["summary"]["traces"] == len(pattern)
    assert doc["summary"]["passed"] == pattern.count("p")
    assert doc["by"] == [] and doc["groups"] == [] and doc["fail_under"] is None


def test_by_metrics_field_gives_pass_rates_per_group(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--by FIELD groups traces by a metrics field; the table and the JSON give per-group rates."""
    runs = _runs(tmp_path, specs_dir, "pfpf", models="a,a,b,b")
    code = main(["check", "--json", "--by", "model", str(specs_dir / "refund.ltl"), str(runs)])
    doc = json.loads(capsys.readouterr().out)
    assert code == EXIT_VIOLATION
    assert [(g["name"], g["traces"], g["passed"]) for g in doc["groups"]] == [
        ("a", 2, 1),
        ("b", 2, 1),
    ]
    assert doc["groups"][0]["key"] == {"model": "a"} and doc["groups"][0]["pass_rate"] == 0.5
    main(["check", "--summary", "--by", "model", str(specs_dir / "refund.ltl"), str(runs)])
    out = capsys.readouterr().out
    assert "pass rate by model" in out and "50.0%" in out


def test_by_builtin_fields_and_missing_values(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--by file groups by source file; a field some traces lack groups them under '-'."""
    runs = _runs(tmp_path, specs_dir, "pf", models="x,y")
    other = tmp_path / "other.json"
    other.write_text((specs_dir / "traces/refund.pass.json").read_text())
    main(["check", "--json", "--by", "file", str(specs_dir / "refund.ltl"), str(runs), str(other)])
    by_file = {g["name"]: g["traces"] for g in json.loads(capsys.readouterr().out)["groups"]}
    assert by_file == {str(runs): 2, str(other): 1}
    main(["check", "--json", "--by", "model", str(specs_dir / "refund.ltl"), str(runs), str(other)])
    names = [g["name"] for g in json.loads(capsys.readouterr().out)["groups"]]
    assert names == ["-", "x", "y"]


def test_by_unknown_field_is_a_usage_error(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--by a field no trace has exits 2 and lists the fields that are present."""
    runs = _runs(tmp_path, specs_dir, "pf", models="x,y")
    code = main(["check", "--by", "modle", str(specs_dir / "refund.ltl"), str(runs)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert "--by modle: no trace has this field" in err and "model" in err and "label" in err


def test_summary_prints_no_per_trace_table(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--summary prints the aggregates only, even for one trace."""
    runs = _runs(tmp_path, specs_dir, "f")
    assert main(["check", "--summary", str(specs_dir / "refund.ltl"), str(runs)]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "pass rate per constraint" in out and "mean score" in out
    assert "tool sequence" not in out and "detail" not in out


def test_fail_under_decides_exit_by_mean_score(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--fail-under SCORE exits 1 only when the mean score is below SCORE."""
    runs = _runs(tmp_path, specs_dir, "ppppf")
    spec = str(specs_dir / "refund.ltl")
    main(["check", "--json", spec, str(runs)])
    mean = json.loads(capsys.readouterr().out)["summary"]["mean_score"]
    assert 0.8 < mean < 1.0
    assert main(["check", "--summary", "--fail-under", "0.8", spec, str(runs)]) == EXIT_OK
    assert main(["check", "--summary", "--fail-under", "0.99", spec, str(runs)]) == EXIT_VIOLATION
    capsys.readouterr()
    assert main(["check", "--json", "--fail-under", "0.8", spec, str(runs)]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["fail_under"] == 0.8


def test_fail_under_rejects_scores_outside_the_unit_interval(
    specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--fail-under 1.5 is a usage error (argparse exit 2)."""
    with pytest.raises(SystemExit) as info:
        main(["check", "--fail-under", "1.5", str(specs_dir / "refund.ltl"), "x.json"])
    assert info.value.code == EXIT_USAGE
    assert "expected a score in [0, 1]" in capsys.readouterr().err


def test_forced_format_that_fits_nothing_is_an_input_error(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--format openai-chat on a tau-bench-shaped results file is exit 3, never FULL."""
    results = tmp_path / "results.json"
    traj = [
        {"role": "user", "content": "refund A-1001"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": "{}"},
                }
            ],
        },
    ]
    items = [{"task_id": i, "reward": 1.0, "info": {}, "traj": traj, "trial": 0} for i in range(3)]
    results.write_text(json.dumps(items))
    code = main(
        ["check", "--json", "--format", "openai-chat", str(specs_dir / "refund.ltl"), str(results)]
    )
    captured = capsys.readouterr()
    assert code == EXIT_INPUT
    assert "forced format 'openai-chat'" in captured.err and "does not fit" in captured.err
    doc = json.loads(captured.out)
    assert doc["summary"]["traces"] == 0 and doc["summary"]["labels"]["FULL"] == 0


def test_forced_format_reads_a_list_of_conversations(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--format openai-chat on a list of {messages} envelopes reads one trace per item."""
    convo = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "function": {"name": "lookup_order", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ]
    }
    path = tmp_path / "convos.json"
    path.write_text(json.dumps([convo, convo]))
    main(["check", "--json", "--format", "openai-chat", str(specs_dir / "refund.ltl"), str(path)])
    doc = json.loads(capsys.readouterr().out)
    sequences = [t["report"]["tool_sequence"] for t in doc["traces"]]
    assert sequences == [["lookup_order"], ["lookup_order"]]


def test_progress_bar_only_on_a_terminal(tmp_path: Path, specs_dir: Path) -> None:
    """A long batch shows a progress bar when stderr is a terminal, and none in a pipe."""
    runs = _runs(tmp_path, specs_dir, "p" * 30)
    cmd = [sys.executable, "-m", "agentguard", "check", "--summary"]
    cmd += [str(specs_dir / "refund.ltl"), str(runs)]
    piped = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert piped.returncode == EXIT_OK, piped.stderr
    assert "scoring" not in piped.stderr
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=follower, env=env, check=False, timeout=120
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.returncode == EXIT_OK
    assert b"scoring" in seen
