"""``agentguard mine`` through the real CLI, and the rollout workflow it starts:
mine -> lint -> test (cases from the runs) -> diff against an existing spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.cli.main import main
from agentguard.language import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"
PASS, FAIL = str(SPECS / "traces" / "refund.pass.json"), str(SPECS / "traces" / "refund.fail.json")


def test_mine_lint_test_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The proposed spec lints clean, passes the cases replaying its runs, and diff
    against the shipped refund spec lists what it changes on the same runs."""
    spec, cases = tmp_path / "mined.ltl", tmp_path / "mined.cases.json"
    assert main(["mine", PASS, FAIL, "-o", str(spec), "--cases", str(cases)]) == 0
    err = capsys.readouterr().err
    assert "written to" in err and "2 policy case(s)" in err
    assert load_spec(spec).tools
    assert main(["lint", "--strict", str(spec)]) == 0
    assert main(["test", str(spec), str(cases)]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out
    assert main(["diff", str(SPECS / "refund.ltl"), str(spec), PASS, FAIL]) == 1
    assert "score 0.200 (PARTIAL) -> 1.000 (FULL)" in capsys.readouterr().out


def test_the_spec_goes_to_stdout_without_output(capsys: pytest.CaptureFixture[str]) -> None:
    """No -o: the spec is printed; the summary goes to stderr."""
    assert main(["mine", PASS]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("# Mined by `agentguard mine` from 1 trace(s)")
    assert "mined " in out.err


def test_negative_runs_and_min_support(capsys: pytest.CaptureFixture[str]) -> None:
    """--negative keeps what rejects the bad run; --min-support is printed in the header."""
    assert main(["mine", PASS, "--negative", FAIL, "--min-support", "0.5"]) == 0
    out = capsys.readouterr()
    assert "rejects 1 of 1 negative run(s)" in out.err
    assert "at\n# least 50% of them" in out.out


@pytest.mark.parametrize("share", ["0", "1.5", "half"])
def test_a_share_out_of_range_is_a_usage_error(
    share: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--min-support outside (0, 1] exits 2 with argparse's message."""
    with pytest.raises(SystemExit) as exc:
        main(["mine", PASS, "--min-support", share])
    assert exc.value.code == 2
    assert "expected a share in (0, 1]" in capsys.readouterr().err


def test_an_unreadable_record_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad record stops mining: exit 3 and the record is named."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tool_calls": [{"tool_name": "a"}]}\n[1, 2\n')
    assert main(["mine", str(bad)]) == 3
    assert "bad.jsonl" in capsys.readouterr().err


def test_cases_replay_user_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs with dialogue give cases with message entries, which `test` observes, so a
    provenance constraint is judged online as offline."""
    runs = tmp_path / "runs.json"
    runs.write_text(
        json.dumps(
            [
                {
                    "messages": [
                        {"role": "user", "content": f"Look up order {o}, please."},
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "type": "function",
                                    "function": {
                                        "name": "lookup_order",
                                        "arguments": json.dumps({"order_id": o}),
                                    },
                                }
                            ],
                        },
                        {
                            "role": "tool",
                            "tool_call_id": "c1",
                            "content": json.dumps({"status": "shipped"}),
                        },
                        {"role": "assistant", "content": "It has shipped."},
                    ]
                }
                for o in ("A-100", "B-200")
            ]
        )
    )
    spec, cases = tmp_path / "m.ltl", tmp_path / "m.cases.json"
    assert main(["mine", str(runs), "-o", str(spec), "--cases", str(cases)]) == 0
    assert "O user_message(text contains v)" in spec.read_text()
    assert any(
        e.get("message") == "user" for e in json.loads(cases.read_text())["cases"][0]["calls"]
    )
    capsys.readouterr()
    assert main(["test", str(spec), str(cases)]) == 0
