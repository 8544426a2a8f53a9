"""`agentguard pec` through a real argparse parser and real files."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.pec.cli import add_parser
from agentguard.pec.loaders import episode_to_json
from tests.pec.helpers import worked_example


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="agentguard")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["pec", *argv])
    code: int = args.func(args)
    return code


def write_episodes(path: Path, records: list[dict[str, Any]], *extra_lines: str) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def worked_file(tmp_path: Path) -> Path:
    records = []
    for method in ("plan-cond", "dual-loop"):
        for s in worked_example():
            record = episode_to_json(s)
            record["labels"] = {"dataset": "bfcl", "model": "llama-4", "method": method}
            records.append(record)
    return write_episodes(tmp_path / "eps.jsonl", records)


def test_json_report_reproduces_worked_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json prints only JSON with TER 0.05, RR 138/190, success 0.74 and intervals."""
    code = run(
        [
            str(worked_file(tmp_path)),
            "--by",
            "method",
            "--by",
            "model",
            "--json",
            "--resamples",
            "500",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    group = out["groups"][0]
    assert group["key"] == ["dual-loop", "llama-4"]
    assert group["ter"] == pytest.approx(0.05)
    assert (group["rr_successes"], group["rr_eligible"]) == (138, 190)
    assert group["final_success"] == pytest.approx(0.74)
    assert group["ter_ci"][0] <= 0.05 <= group["ter_ci"][1]
    assert sum(group["labels"].values()) == 190
    assert out["errors"] == []


def test_table_and_bad_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The rich tables show RR as s/n; bad lines are listed by file:line and exit code is 3."""
    f = write_episodes(
        tmp_path / "e.jsonl", [episode_to_json(s) for s in worked_example()[:20]], "{oops"
    )
    code = run([str(f), "--resamples", "200"])
    captured = capsys.readouterr()
    assert code == 3
    assert "TER" in captured.out
    assert "PEC@4" in captured.out
    assert "(10/10)" in captured.out
    assert f"{f}:21" in captured.err


def test_csv(tmp_path: Path) -> None:
    """--csv writes one row per group with the Table 2 columns and the chosen PEC@k."""
    csv_path = tmp_path / "t.csv"
    argv = [str(worked_file(tmp_path)), "--csv", str(csv_path), "--resamples", "200"]
    assert run([*argv, "--depths", "1,2"]) == 0
    rows = list(csv.DictReader(csv_path.read_text().splitlines()))
    assert [r["method"] for r in rows] == ["dual-loop", "plan-cond"]
    assert float(rows[0]["ter"]) == pytest.approx(0.05)
    assert rows[0]["rr_eligible"] == "190"
    assert "pec_2_hi" in rows[0]
    assert "pec_3" not in rows[0]


def test_plot(tmp_path: Path) -> None:
    """--plot writes a PNG of the PEC curves."""
    pytest.importorskip("matplotlib", reason="matplotlib not installed (agentguard[plot])")
    png = tmp_path / "pec.png"
    assert run([str(worked_file(tmp_path)), "--plot", str(png), "--resamples", "200"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without matplotlib, --plot fails with the install hint for the [plot] extra."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = run([str(worked_file(tmp_path)), "--plot", str(tmp_path / "p.png"), "--resamples", "50"])
    assert code == 2
    assert "agentguard[plot]" in capsys.readouterr().err


def test_unscored_records_need_an_oracle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records without a verdict are reported; with nothing scored the exit code is 2."""
    f = write_episodes(
        tmp_path / "e.jsonl", [{"task_id": "a", "success": True, "calls": [{"tool_name": "x"}]}]
    )
    assert run([str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:1" in err
    assert "--bfcl" in err


def test_replay_with_tool_definitions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--tools replays episodes against JSON Schema function definitions."""
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {
                    "name": "add",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}},
                        "required": ["a"],
                    },
                }
            ]
        )
    )
    f = write_episodes(
        tmp_path / "e.jsonl",
        [
            {
                "task_id": "1",
                "method": "m",
                "success": True,
                "calls": [{"tool_name": "add", "arguments": {"a": 1}}],
            },
            {
                "task_id": "2",
                "method": "m",
                "success": True,
                "calls": [{"tool_name": "add", "arguments": {"a": "1"}}],
            },
        ],
    )
    assert run([str(f), "--tools", str(tools), "--json", "--resamples", "100"]) == 0
    group = json.loads(capsys.readouterr().out)["groups"][0]
    assert group["ter"] == 0.5
    assert group["labels"]["schema"] == 1


def test_bfcl_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--bfcl replays recorded BFCL episodes against the real backends."""
    pytest.importorskip("bfcl_eval", reason="bfcl-eval not installed")
    from agentguard.pec.bfcl import ground_truth_episode, load_all

    entries = load_all(["multi_turn_base"])
    chosen = [entries[f"multi_turn_base_{i}"] for i in (0, 1, 2, 153, 188)]
    f = write_episodes(
        tmp_path / "b.jsonl", [episode_to_json(ground_truth_episode(e)) for e in chosen]
    )
    assert run([str(f), "--bfcl", "--json", "--resamples", "100"]) == 0
    group = json.loads(capsys.readouterr().out)["groups"][0]
    assert group["key"] == ["ground-truth"]
    assert (group["n"], group["rr_eligible"]) == (5, 2)
    assert group["labels"]["state-consistency"] == 2


def test_bad_depths_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed --depths is reported, exit code 2."""
    assert run([str(worked_file(tmp_path)), "--depths", "a,b"]) == 2
    assert "--depths" in capsys.readouterr().err


def test_through_main_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The main `agentguard` entry point reaches `pec` (plugin wiring)."""
    from agentguard.cli.main import main

    code = main(["pec", str(worked_file(tmp_path)), "--json", "--resamples", "100"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["groups"][0]["n"] == 200


def test_replay_with_ltl_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--spec replays with .ltl tool declarations: `requires` and `from results` are checked."""
    spec = tmp_path / "shop.ltl"
    spec.write_text("""spec shop
tool lookup(customer: str)
tool verify(customer: str)
tool refund(order_id: str from results(lookup)) requires O verify
""")
    lookup = {"tool_name": "lookup", "arguments": {"customer": "c"}, "tool_result": ["A1"]}
    verify = {"tool_name": "verify", "arguments": {"customer": "c"}, "tool_result": "ok"}
    refund = {"tool_name": "refund", "arguments": {"order_id": "A1"}, "tool_result": "done"}
    f = write_episodes(
        tmp_path / "e.jsonl",
        [
            {"task_id": "1", "method": "m", "success": True, "calls": [lookup, verify, refund]},
            {"task_id": "2", "method": "m", "success": True, "calls": [lookup, refund, verify]},
            {"task_id": "3", "method": "m", "success": False, "calls": [verify, refund]},
        ],
    )
    assert run([str(f), "--spec", str(spec), "--json", "--resamples", "100"]) == 0
    group = json.loads(capsys.readouterr().out)["groups"][0]
    assert group["labels"]["precondition"] == 1
    assert group["labels"]["dependency"] == 1
    assert group["mean_fed"] == pytest.approx((4 + 2 + 2) / 3)


def test_missing_spec_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable --spec is reported with exit code 2."""
    assert run([str(worked_file(tmp_path)), "--spec", str(tmp_path / "none.ltl")]) == 2
    assert "none.ltl" in capsys.readouterr().err


def test_baseline_differences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--baseline adds paired differences; identical methods differ by exactly 0."""
    f = worked_file(tmp_path)
    assert run([str(f), "--baseline", "plan-cond", "--json", "--resamples", "200"]) == 0
    groups = {tuple(g["key"]): g for g in json.loads(capsys.readouterr().out)["groups"]}
    delta = groups[("dual-loop",)]["vs_baseline"]
    assert delta["baseline"] == ["plan-cond"]
    assert delta["ter"] == 0.0
    assert delta["ter_ci"] == [0.0, 0.0]
    assert groups[("plan-cond",)]["vs_baseline"] is None
    assert run([str(f), "--baseline", "plan-cond", "--resamples", "100"]) == 0
    assert "Paired differences" in capsys.readouterr().out
    assert run([str(f), "--baseline", "nope", "--resamples", "100"]) == 2
    assert "nope" in capsys.readouterr().err
