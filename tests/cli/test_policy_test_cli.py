"""``agentguard test``: the shipped policy cases of every spec, mismatches, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.cli.main import main

SPECS = Path(__file__).resolve().parents[2] / "specs"
SHIPPED = sorted(p.stem for p in SPECS.glob("*.ltl"))


def test_every_shipped_spec_has_cases() -> None:
    """Each specs/X.ltl ships specs/X.cases.json."""
    assert SHIPPED
    assert [s for s in SHIPPED if not (SPECS / f"{s}.cases.json").exists()] == []


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_cases_pass(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI runs every shipped case of the spec and every expectation holds."""
    cases = SPECS / f"{name}.cases.json"
    code = main(["test", str(SPECS / f"{name}.ltl"), str(cases), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, [c for c in doc["cases"] if not c["passed"]]
    assert doc["failed"] == 0
    assert doc["passed"] == len(json.loads(cases.read_text())["cases"]) >= 4


def write(tmp_path: Path, cases: object) -> Path:
    path = tmp_path / "c.cases.json"
    path.write_text(json.dumps({"cases": cases}), encoding="utf-8")
    return path


def test_a_mismatch_exits_one_with_a_readable_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong expectation prints FAIL, the call, expected and got lines; exit 1."""
    path = write(
        tmp_path,
        [
            {
                "name": "wrong",
                "calls": [
                    {"tool": "lookup_order", "args": {"order_id": "A1"}, "result": {}},
                    {"tool": "issue_refund", "args": {"order_id": "A1", "amount": 1}},
                ],
            },
            {
                "name": "expects allow",
                "calls": [
                    {
                        "tool": "issue_refund",
                        "args": {"order_id": "A1", "amount": 1},
                        "expect": "allow",
                    }
                ],
                "compliance": 0.5,
            },
        ],
    )
    assert main(["test", str(SPECS / "refund.ltl"), str(path)]) == 1
    out = capsys.readouterr().out
    assert "PASS" in out and "FAIL" in out  # the first case asserts nothing about decisions
    assert "call 1 issue_refund:" in out
    assert '- expected: {"action": "allow"}' in out
    assert '+ got:      {"action": "stop"}' in out
    assert "  compliance:" in out
    assert "1 passed, 1 failed" in out


def test_late_violations_and_errors_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A result that breaks a constraint is a late violation; an error result is kept."""
    spec = tmp_path / "s.ltl"
    spec.write_text(
        "spec s\nconstraint ok severity HARD_STOP := G(lookup -> lookup(result.ok = true))\n"
    )
    path = write(
        tmp_path,
        [
            {
                "name": "bad result",
                "calls": [{"tool": "lookup", "result": {"ok": False}, "late": ["ok"]}],
                "stopped": True,
            },
            {"name": "error", "calls": [{"tool": "x", "error": "boom", "expect": "allow"}]},
        ],
    )
    assert main(["test", str(spec), str(path)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "c.cases.json:1:2: not JSON"),
        ('{"cases": {}}', 'expected {"cases"'),
        ('{"cases": [{"calls": [{"tool": "x", "expect": "permit"}]}]}', "unknown action"),
        ('{"cases": [{"calls": [{"args": {}}]}]}', 'a call is an object with a "tool"'),
        ('{"cases": [{"firewall": {"colour": 1}, "calls": []}]}', "case 1:"),
    ],
)
def test_bad_case_files_exit_three_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    """Broken JSON, a wrong shape, an unknown action or option: exit 3 with the file named."""
    path = tmp_path / "c.cases.json"
    path.write_text(content, encoding="utf-8")
    assert main(["test", str(SPECS / "refund.ltl"), str(path)]) == 3
    err = capsys.readouterr().err
    assert str(path) in err and message in err


def test_the_case_example_of_the_docs_passes_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/policy-tests.md's case-format example, run on specs/refund.ltl as the page
    says, holds every expectation it states."""
    page = (SPECS.parent / "docs" / "policy-tests.md").read_text()
    start = page.index("```json\n") + len("```json\n")
    example = page[start : page.index("```", start)]
    cases = tmp_path / "example.cases.json"
    cases.write_text(example)
    code = main(["test", str(SPECS / "refund.ltl"), str(cases), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc["cases"]
    assert doc["passed"] == 1
