"""The real `agentguard` CLI through its entry point: check, lint, fmt and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentguard import default_registry
from agentguard.cli.main import EXIT_INPUT, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main


def test_check_passing_trace_exits_zero(
    specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fully compliant trace prints its table and exits 0."""
    code = main(
        ["check", str(specs_dir / "refund.ltl"), str(specs_dir / "traces/refund.pass.json")]
    )
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "1.000 FULL" in out and "identity_first" in out


def test_check_json_is_appendix_b_shape(
    specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json prints the report with the paper's keys; a violation exits 1."""
    code = main(
        [
            "check",
            "--json",
            str(specs_dir / "refund.ltl"),
            str(specs_dir / "traces/refund.fail.json"),
        ]
    )
    report = json.loads(capsys.readouterr().out)["traces"][0]["report"]
    assert code == EXIT_VIOLATION
    assert report["compliance_label"] == "PARTIAL"
    assert {c["name"] for c in report["constraints"] if not c["passed"]} == {
        "identity_first",
        "refund_only_known_orders",
        "refund_cap",
        "one_refund_per_order",
    }


def test_bad_records_are_reported_and_others_scored(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken record is named by file and line on stderr; the good ones are still scored."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"tool_calls": [{"tool_name": "lookup_order"}]}\n{broken\n')
    code = main(["check", "--json", str(specs_dir / "refund.ltl"), str(runs)])
    captured = capsys.readouterr()
    assert code == EXIT_INPUT
    assert f"{runs}:2: invalid JSON" in captured.err
    results = json.loads(captured.out)["traces"]
    assert results[0]["report"]["compliance_label"] in ("PARTIAL", "FULL", "NONE")
    assert results[1]["report"] is None and "invalid JSON" in results[1]["error"]


@pytest.mark.parametrize("command", ["check", "pec"])
def test_errors_are_never_wrapped_inside_a_line(
    command: str, tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error naming a deep path stays one line on stderr, whatever the width: rich
    wrapped it at 80 columns when stderr was not a terminal, breaking the path and the
    sentence apart for whoever greps the output."""
    deep = tmp_path.joinpath(*["a-directory-with-a-long-name"] * 6)
    deep.mkdir(parents=True)
    runs = deep / "runs.jsonl"
    runs.write_text('{"tool_calls": [{"tool_name": "lookup_order"}]}\n{broken\n')
    if command == "check":
        code = main(["check", str(specs_dir / "refund.ltl"), str(runs)])
        expected = f"{runs}:2: invalid JSON"
    else:
        runs.write_text(json.dumps({"task_id": "t", "tool_calls": [{"tool_name": "x"}]}) + "\n")
        code = main(["pec", str(runs)])
        expected = f"{runs}:1: episode has no final success"
    assert code in (EXIT_INPUT, EXIT_USAGE)
    err = capsys.readouterr().err
    assert expected in err, err
    assert any(str(runs) in line for line in err.splitlines())


def test_bad_spec_exits_two_with_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invalid spec prints file:line:column and a caret, exit 2."""
    spec = tmp_path / "bad.ltl"
    spec.write_text("constraint a := G(b ->\n")
    code = main(["lint", str(spec)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert f"{spec}:1:" in err and "^" in err


def test_lint_and_fmt(specs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lint summarises constraints; fmt prints canonical text."""
    assert main(["lint", "--json", str(specs_dir / "filesystem_safety.ltl")]) == EXIT_OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["spec"] == "filesystem_safety" and len(summary["constraints"]) == 6
    assert main(["fmt", str(specs_dir / "filesystem_safety.ltl")]) == EXIT_OK
    assert capsys.readouterr().out.startswith("spec filesystem_safety")


def test_console_script_runs(specs_dir: Path) -> None:
    """`python -m agentguard` runs the same CLI in a subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentguard", "lint", str(specs_dir / "appendix_b_fanout.ltl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "tool_b_before_tool_d" in proc.stdout


def test_load_imports_user_predicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--load MODULE imports user code that registers the spec's predicates."""
    (tmp_path / "my_preds.py").write_text(
        "import agentguard\nagentguard.register_predicate('is_even', lambda x: x % 2 == 0, arity=1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # the module registers into the process-wide registry: restore it after the test
    monkeypatch.setattr(default_registry, "predicates", dict(default_registry.predicates))
    monkeypatch.delitem(sys.modules, "my_preds", raising=False)
    spec = tmp_path / "s.ltl"
    spec.write_text("predicate is_even(x)\nconstraint even := forall x in args(t.i): is_even(x)\n")
    trace = tmp_path / "t.json"
    trace.write_text('{"tool_calls": [{"tool_name": "t", "arguments": {"i": 4}}]}')
    assert main(["check", "--load", "my_preds", str(spec), str(trace)]) == EXIT_OK
    assert main(["check", "--load", "no_such_module_xyz", str(spec), str(trace)]) == EXIT_USAGE
    assert "--load no_such_module_xyz" in capsys.readouterr().err


def test_many_traces_print_a_summary(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past --detail-limit traces, check prints one row per trace and pass rates per constraint."""
    runs = tmp_path / "runs.jsonl"
    good = (specs_dir / "traces/refund.pass.json").read_text().replace("\n", " ")
    bad = (specs_dir / "traces/refund.fail.json").read_text().replace("\n", " ")
    runs.write_text("\n".join([good, bad, good]) + "\n")
    code = main(["check", "--detail-limit", "2", str(specs_dir / "refund.ltl"), str(runs)])
    out = capsys.readouterr().out
    assert code == EXIT_VIOLATION
    assert "3 traces" in out and "pass rate per constraint" in out
    assert "mean score" in out and "FULL 2" in out
    assert "2/3" in out


def test_empty_trace_file_is_an_input_error(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace file with no records is reported (exit 3), never a silent success."""
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n\n")
    assert main(["check", str(specs_dir / "refund.ltl"), str(empty)]) == EXIT_INPUT
    assert "no trace records" in capsys.readouterr().err


def test_unregistered_declared_predicate_is_a_setup_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec declaring a predicate nobody registered exits 2 and points at --load."""
    spec = tmp_path / "s.ltl"
    spec.write_text(
        "predicate never_registered_xyz(x)\nconstraint c := forall x in args(t.i): never_registered_xyz(x)\n"
    )
    trace = tmp_path / "t.json"
    trace.write_text('{"tool_calls": [{"tool_name": "t", "arguments": {"i": 4}}]}')
    assert main(["check", str(spec), str(trace)]) == EXIT_USAGE
    assert "--load" in capsys.readouterr().err


def test_lint_json_reports_problems_as_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lint --json on an invalid spec prints its located problems as JSON (exit 2)."""
    spec = tmp_path / "bad.ltl"
    spec.write_text("constraint a weight 0 := G(b)\nconstraint a := x\n")
    assert main(["lint", "--json", str(spec)]) == EXIT_USAGE
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False
    assert [(p["line"], p["column"]) for p in out["problems"]] == [(1, 14), (2, 1)]


def test_a_call_breaking_a_tool_declaration_fails_check(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace that holds every constraint but has a call the firewall would refuse (an
    argument of the wrong type) keeps its score, is named, and makes check exit 1; with
    --fail-under only the mean score decides."""
    calls = [
        {"tool_name": "verify_identity", "arguments": {"customer_id": "C1"}},
        {"tool_name": "lookup_order", "arguments": {"order_id": "A1"}},
        {"tool_name": "issue_refund", "arguments": {"order_id": "A1", "amount": "9000"}},
        {"tool_name": "final_answer", "arguments": {"answer": "ok"}},
    ]
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({"tool_calls": calls}) + "\n")
    spec = str(specs_dir / "refund.ltl")
    assert main(["check", spec, str(runs)]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "1.000 FULL" in out
    assert "argument 'amount' must be a number" in out
    runs.write_text((json.dumps({"tool_calls": calls}) + "\n") * 3)
    assert main(["check", "--detail-limit", "1", spec, str(runs)]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "tool:issue_refund:schema" in out and "3 break a tool declaration" in out
    assert main(["check", "--fail-under", "0.9", spec, str(runs)]) == EXIT_OK


def test_an_unknown_option_is_named_with_the_commands_usage(
    specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --bogus` says so with check's own usage line (exit 2), not the top level's."""
    with pytest.raises(SystemExit) as exit_:
        main(["check", "--bogus", str(specs_dir / "refund.ltl"), "x.jsonl"])
    err = capsys.readouterr().err
    assert exit_.value.code == EXIT_USAGE
    assert err.startswith("usage: agentguard check") and "unrecognized arguments: --bogus" in err
