"""`agentguard lint`: warnings in the table and JSON, --strict, --witness, --load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentguard import default_registry
from agentguard.analysis import WARNING_KINDS
from agentguard.cli.main import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, main

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.ltl"))

BAD = """tool cancel(reservation_id: str)
tool refund(amount: number)
tool pay(to: str)
constraint never := F cancel & G !cancel
constraint taut := G(cancel | !cancel)
constraint must_pay := F pay
constraint never_pay := G !pay
constraint typo := G !cancel(reservaton_id = "x")
constraint money := G !refund(amount > "500")
constraint cite severity HARD_STOP := F refund
constraint whole := Predicate(grounded)
"""


@pytest.fixture
def bad_spec(tmp_path: Path) -> Path:
    path = tmp_path / "bad.ltl"
    path.write_text(BAD)
    return path


AGENT_TOOLS = [  # OpenAI function definitions, as pec --tools reads them
    {
        "type": "function",
        "function": {
            "name": "cancel",
            "parameters": {"type": "object", "properties": {"reservation_id": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund",
            "parameters": {"type": "object", "properties": {"amount": {"type": "string"}}},
        },
    },
]


def test_every_kind_in_json_with_location(
    bad_spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json lists each warning with kind, constraint, line, column and message; with
    --tools, the agent's tools decide the spec's names and declarations too."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(AGENT_TOOLS))
    assert main(["lint", "--json", str(bad_spec), "--tools", str(tools)]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    got = {(w["kind"], w["constraint"], w["line"]) for w in doc["warnings"]}
    assert got == {
        ("tool-mismatch", None, 2),  # refund's amount: number here, a string for the agent
        ("unknown-tool", None, 3),  # pay: the agent has no such tool
        ("unsatisfiable", "never", 4),
        ("valid", "taut", 5),
        ("conflict", "must_pay", 6),
        ("unknown-argument", "typo", 8),
        ("type-mismatch", "money", 9),
        ("never-blocks", "cite", 10),
        ("late", "whole", 11),
    }
    assert {w["kind"] for w in doc["warnings"]} == set(WARNING_KINDS)
    for w in doc["warnings"]:
        assert {"kind", "constraint", "line", "column", "message", "file"} <= set(w)
        assert w["column"] >= 1 and w["message"]
    conflict = next(w for w in doc["warnings"] if w["kind"] == "conflict")
    assert conflict["related"] == ["never_pay"]


def test_table_shows_file_line_column(
    bad_spec: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table names file:line:column and the kind of each warning."""
    monkeypatch.chdir(bad_spec.parent)
    assert main(["lint", bad_spec.name]) == EXIT_OK
    out = capsys.readouterr().out
    assert "7 warning(s)" in out
    assert "bad.ltl:8:30" in out
    assert "unknown-argument" in out and "reservation_id" in out


def test_strict_exits_one_on_any_warning(bad_spec: Path, tmp_path: Path) -> None:
    """--strict turns warnings into exit 1; a clean spec still exits 0."""
    assert main(["lint", "--strict", str(bad_spec)]) == EXIT_VIOLATION
    clean = tmp_path / "clean.ltl"
    clean.write_text('tool rm(path: str)\nconstraint safe := G !rm(path = "/")\n')
    assert main(["lint", "--strict", str(clean)]) == EXIT_OK


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_shipped_specs_have_no_false_warnings(
    spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped specs lint clean apart from end-of-run checks the monitor documents."""
    assert main(["lint", "--json", str(spec)]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    kinds = {(w["kind"], w["constraint"]) for w in doc["warnings"]}
    # code_qa's grounding constraint uses a user extractor: the monitor checks it at the end
    allowed = {("late", "answer_is_grounded")} if spec.name == "code_qa.ltl" else set()
    assert kinds == allowed


def test_witness_prints_paste_able_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--witness prints a shortest satisfying trace that `check` then passes."""
    spec = tmp_path / "s.ltl"
    spec.write_text(
        "tool lookup(id: str)\ntool refund(id: str)\n"
        "constraint a := Before(lookup, refund)\nconstraint b := F refund\n"
    )
    assert main(["lint", "--witness", str(spec)]) == EXIT_OK
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("records: "))
    trace = tmp_path / "w.json"
    trace.write_text(line.removeprefix("records: "))
    assert main(["check", str(spec), str(trace)]) == EXIT_OK


def test_witness_json_gives_the_proof_when_none_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a conflict, the witness section says no trace exists and names the set."""
    spec = tmp_path / "s.ltl"
    spec.write_text("constraint a := F pay\nconstraint b := G !pay\n")
    assert main(["lint", "--json", "--witness", str(spec)]) == EXIT_OK
    w = json.loads(capsys.readouterr().out)["witness"]
    assert w["found"] is False and w["unsatisfiable"] is True
    assert w["conflict"] == ["a", "b"]


def test_lint_reports_unregistered_predicates_as_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A declared predicate nobody registered is a setup error (exit 2) naming --load."""
    spec = tmp_path / "s.ltl"
    spec.write_text(
        "predicate never_registered_xyz(x)\n"
        "constraint c := forall x in args(t.i): never_registered_xyz(x)\n"
    )
    assert main(["lint", str(spec)]) == EXIT_USAGE
    assert "declared but not registered: predicate never_registered_xyz" in capsys.readouterr().err
    assert main(["lint", "--json", str(spec)]) == EXIT_USAGE
    assert json.loads(capsys.readouterr().out)["ok"] is False


def _predicate_module(folder: Path, name: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(
        "import agentguard\n"
        f"agentguard.register_predicate('{name}_pred', lambda x: True, arity=1)\n"
    )
    return path


def _spec_using(folder: Path, name: str) -> Path:
    spec = folder / "s.ltl"
    spec.write_text(
        f"predicate {name}_pred(x)\nconstraint c := forall x in args(t.i): {name}_pred(x)\n"
    )
    return spec


def test_load_accepts_a_file_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--load path/to/module.py imports that file."""
    monkeypatch.setattr(default_registry, "predicates", dict(default_registry.predicates))
    monkeypatch.delitem(sys.modules, "h6_by_path", raising=False)
    module = _predicate_module(tmp_path, "h6_by_path")
    assert (
        main(["lint", "--load", str(module), str(_spec_using(tmp_path, "h6_by_path"))]) == EXIT_OK
    )
    assert main(["lint", "--load", str(tmp_path / "missing.py"), str(module)]) == EXIT_USAGE


def test_load_finds_a_module_in_the_current_directory_with_the_console_script(
    tmp_path: Path,
) -> None:
    """The installed `agentguard` script imports --load MODULE from the working directory."""
    script = Path(sys.executable).parent / "agentguard"
    if not script.exists():  # pragma: no cover - the editable install puts it next to python
        pytest.fail(f"console script not found at {script}")
    _predicate_module(tmp_path, "h6_in_cwd")
    spec = _spec_using(tmp_path, "h6_in_cwd")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(script), "lint", "--load", "h6_in_cwd", spec.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr


def test_a_misspelt_tool_without_declarations_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`O list_dirctory` beside `list_directory`: unknown-tool with a did-you-mean, and
    --strict exits 1 (it linted clean, then never fired)."""
    spec = tmp_path / "typo.ltl"
    spec.write_text(
        "constraint listed_first := G(read_file -> O list_directory)\n"
        "constraint listed := O list_dirctory\n"
    )
    assert main(["lint", "--strict", str(spec)]) == EXIT_VIOLATION
    out = capsys.readouterr().out
    assert "unknown-tool" in out and "typo.ltl:2:" in out and "'list_directory'" in out


def test_tools_file_names_the_closest_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lint --tools FILE ({tool: schema} form): a spec tool outside it is unknown-tool,
    with the closest tool, though nothing else in the spec looks like it."""
    spec = tmp_path / "s.ltl"
    spec.write_text("constraint c := G(get_user_detail -> O login)\n")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"get_user_details": {"type": "object"}, "login": None}))
    assert main(["lint", "--json", str(spec), "--tools", str(tools)]) == EXIT_OK
    (warning,) = json.loads(capsys.readouterr().out)["warnings"]
    assert warning["kind"] == "unknown-tool" and warning["line"] == 1
    assert "did you mean 'get_user_details'?" in warning["message"]


@pytest.mark.parametrize("content", ["not json", '"a string"', '[{"parameters": {}}]'])
def test_an_unreadable_tools_file_is_a_usage_error(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tools file that is not function definitions: exit 2 naming the file."""
    spec = tmp_path / "s.ltl"
    spec.write_text("constraint c := F a\n")
    tools = tmp_path / "tools.json"
    tools.write_text(content)
    assert main(["lint", str(spec), "--tools", str(tools)]) == EXIT_USAGE
    assert "tools.json: cannot read tool definitions" in capsys.readouterr().err
    assert main(["lint", str(spec), "--tools", str(tmp_path / "none.json")]) == EXIT_USAGE
