"""BFCL's own result and score files, the error rules, and `pec --bfcl` on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval not installed (pip install 'agentguard[bfcl]')")

from agentguard.cli.main import main
from agentguard.pec.bfcl import KNOWN_BROKEN, BfclEnvironment, load_all, parse_call
from agentguard.pec.bfcl_files import (
    call_text,
    is_result_path,
    load_result_files,
    model_of,
)
from agentguard.pec.environment import (
    default_error_rule,
    is_error_result,
    is_query,
    raised_only_rule,
    strict_error_rule,
)
from agentguard.trace.model import Call

ENTRIES = load_all()
MODEL = "gpt-4o-2024-11-20-FC"


def fc_turns(entry_id: str) -> list[list[Any]]:
    """The ground truth as a function-calling model's ``result``: one step per turn."""
    entry = ENTRIES[entry_id]
    turns: list[list[Any]] = []
    for texts in entry.ground_truth:
        calls = [parse_call(t, entry) for t in texts]
        turns.append([[{c.name: json.dumps(dict(c.args))} for c in calls]] if calls else [])
    return turns


def write_result(root: Path, category: str, records: list[dict[str, Any]]) -> Path:
    """BFCL's layout: result/<model>/multi_turn/BFCL_v4_<category>_result.json, JSON Lines."""
    folder = root / "result" / MODEL / "multi_turn"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"BFCL_v4_{category}_result.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_score(root: Path, category: str, total: int, failed: list[str]) -> Path:
    """BFCL's score file: a summary line, then one line per failed entry."""
    folder = root / "score" / MODEL / "multi_turn"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"BFCL_v4_{category}_score.json"
    lines: list[dict[str, Any]] = [
        {"accuracy": (total - len(failed)) / total, "correct_count": total - len(failed)}
    ]
    lines[0]["total_count"] = total
    lines += [
        {"id": i, "model_name": MODEL, "test_category": category, "valid": False, "error": {}}
        for i in failed
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def bfcl_function(relpath: str, name: str) -> Any:
    """One function of an installed bfcl_eval module, compiled alone (its module imports
    tree_sitter, which the lean install leaves out)."""
    import ast

    import bfcl_eval

    path = Path(bfcl_eval.__file__).parent / relpath
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    namespace: dict[str, Any] = {"json": json}
    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    return namespace[name]


# ------------------------------------------------------------------- error rules
@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("ticket_get_login_status", True),
        ("get_watchlist", True),
        ("list_users", True),
        ("authenticate_twitter", False),
        ("verify_traveler_information", False),
        ("cd", False),
    ],
)
def test_query_names(name: str, query: bool) -> None:
    """Read-only queries are recognised by a query word in the tool name."""
    assert is_query(name) is query


def test_status_query_false_is_an_answer() -> None:
    """`{"login_status": false}` from a status query is information, not a refusal."""
    call = Call("ticket_get_login_status", {})
    assert not default_error_rule(call, {"login_status": False})
    assert strict_error_rule(call, {"login_status": False})
    assert default_error_rule(Call("authenticate_twitter", {}), {"authentication_status": False})


@pytest.mark.parametrize(
    "result",
    [
        ["Error: User not authenticated. Please log in to view the watchlist."],
        [{"error": "User not authenticated. Please log in to view tickets."}],
        '["Error: nope"]',
    ],
)
def test_error_inside_a_list(result: Any) -> None:
    """An error returned inside a list is a failure, for every rule but raised-only."""
    assert is_error_result(result)
    assert default_error_rule(Call("get_watchlist", {}), result)
    assert not raised_only_rule(Call("get_watchlist", {}), result)


def test_plain_lists_are_information() -> None:
    """A list of ordinary results (tweets, symbols) is not an error."""
    assert not is_error_result([{"id": 1, "content": "hi"}, "NVDA"])


def test_backend_query_accepted_and_list_error_rejected() -> None:
    """On the real backends: the login-status query passes; an unauthenticated watchlist fails."""
    env = BfclEnvironment(ENTRIES)
    env.reset("multi_turn_base_2")
    assert env.execute(Call("ticket_get_login_status", {})) == (True, {"login_status": False})
    env.reset("multi_turn_base_105")
    accepted, result = env.execute(Call("get_watchlist", {}))
    assert not accepted and "not authenticated" in result[0]
    strict = BfclEnvironment(ENTRIES, strict_error_rule)
    strict.reset("multi_turn_base_2")
    assert strict.execute(Call("ticket_get_login_status", {}))[0] is False


# ------------------------------------------------------------------- result files
def test_result_layout_detected(tmp_path: Path) -> None:
    """Files and `result/` directories in BFCL's layout are recognised; the model is the folder."""
    path = write_result(tmp_path, "multi_turn_base", [])
    assert is_result_path(path) and is_result_path(tmp_path / "result")
    assert not is_result_path(tmp_path / "runs.jsonl")
    assert model_of(path) == MODEL


def test_function_calling_and_prompting_steps(tmp_path: Path) -> None:
    """`{name: json-args}` steps and Python call text give the same calls, turns recorded."""
    entry = ENTRIES["multi_turn_base_0"]
    fc = {"id": entry.id, "result": fc_turns(entry.id)}
    prompting = [[f"[{', '.join(turn)}]"] if turn else [] for turn in entry.ground_truth]
    path = write_result(tmp_path, "multi_turn_base", [fc])
    other = tmp_path / "prompting" / "BFCL_v4_multi_turn_base_result.json"
    other.parent.mkdir()
    other.write_text(json.dumps({"id": entry.id, "result": prompting}) + "\n", encoding="utf-8")
    (a,) = load_result_files(path, entries=ENTRIES)
    (b,) = load_result_files(other, entries=ENTRIES)
    assert a.episode is not None and b.episode is not None
    assert [(c.name, dict(c.args)) for c in a.episode.calls] == [
        (c.name, dict(c.args)) for c in b.episode.calls
    ]
    assert a.episode.turns == tuple(t for t, texts in enumerate(entry.ground_truth) for _ in texts)
    assert a.episode.labels == {
        "dataset": "bfcl-v3",
        "category": "multi_turn_base",
        "model": MODEL,
    }
    assert b.episode.labels["model"] == "-"


def test_call_text_matches_bfcl() -> None:
    """Calls are handed to BFCL's checker in the text BFCL's own decoder writes."""
    convert_to_function_call = bfcl_function("model_handler/utils.py", "convert_to_function_call")
    call = Call("mv", {"source": "a.txt", "destination": "b", "n": 3, "flag": True})
    expected = convert_to_function_call([{call.name: json.dumps(dict(call.args))}])
    assert [call_text(call)] == expected


def test_checker_decides_success_without_scores(tmp_path: Path) -> None:
    """Without a score file, BFCL's multi-turn checker decides; its global cache is left clean."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    good = {"id": "multi_turn_base_0", "result": fc_turns("multi_turn_base_0")}
    chatty: dict[str, Any] = {"id": "multi_turn_base_1", "result": fc_turns("multi_turn_base_1")}
    chatty["result"][1] = ["I am not able to do that."]  # no decodable call in turn 1
    short = {"id": "multi_turn_base_3", "result": fc_turns("multi_turn_base_3")[:-1]}
    path = write_result(tmp_path, "multi_turn_base", [good, chatty, short])
    loaded = load_result_files(path, entries=ENTRIES)
    assert [x.episode.success for x in loaded if x.episode] == [True, False, False]
    assert loaded[1].episode is not None
    assert 1 not in (loaded[1].episode.turns or ())  # the chat step never ran
    assert not any(n.startswith("agentguard_") for n in vars(multi_turn_utils))


def test_score_file_gives_success(tmp_path: Path) -> None:
    """With BFCL's score directory, success is 'not listed as failed'."""
    ids = ["multi_turn_base_0", "multi_turn_base_1"]
    write_result(tmp_path, "multi_turn_base", [{"id": i, "result": fc_turns(i)} for i in ids])
    write_score(tmp_path, "multi_turn_base", 2, ["multi_turn_base_1"])
    loaded = load_result_files(tmp_path / "result", entries=ENTRIES, scores=tmp_path / "score")
    assert [x.episode.success for x in loaded if x.episode] == [True, False]


def test_score_file_for_other_results_is_an_error(tmp_path: Path) -> None:
    """A score file counting a different number of entries is refused, naming the file."""
    from agentguard.errors import TraceError

    write_result(tmp_path, "multi_turn_base", [{"id": "multi_turn_base_0", "result": []}])
    score = write_score(tmp_path, "multi_turn_base", 200, [])
    with pytest.raises(TraceError, match=str(score)):
        load_result_files(tmp_path / "result", entries=ENTRIES, scores=tmp_path / "score")


def test_bad_lines_are_named(tmp_path: Path) -> None:
    """An unknown id or a broken line is an error for that line; the others load."""
    path = write_result(
        tmp_path,
        "multi_turn_base",
        [{"id": "multi_turn_base_0", "result": fc_turns("multi_turn_base_0")}, {"id": "nope"}],
    )
    with path.open("a", encoding="utf-8") as f:
        f.write("{not json\n")
    loaded = load_result_files(path, entries=ENTRIES)
    assert loaded[0].episode is not None
    assert loaded[1].error is not None and f"{path}:2" in str(loaded[1].error)
    assert loaded[2].error is not None and f"{path}:3" in str(loaded[2].error)


# --------------------------------------------------------------------------- CLI
def test_cli_scores_bfcl_files_and_counts_known_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ground truth of a whole category, as BFCL files: first failures = broken entries."""
    category = "multi_turn_base"
    ids = [e for e in ENTRIES if e.startswith(category + "_")]
    write_result(tmp_path, category, [{"id": i, "result": fc_turns(i)} for i in ids])
    write_score(tmp_path, category, len(ids), [])
    out = tmp_path / "episodes.jsonl"
    code = main(
        [
            "pec",
            str(tmp_path / "result"),
            "--bfcl",
            "--bfcl-scores",
            str(tmp_path / "score"),
            "--json",
            "--resamples",
            "200",
            "--episodes",
            str(out),
        ]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    broken = {i for i in KNOWN_BROKEN if i.startswith(category + "_")}
    assert payload["bfcl_known_broken"] == {
        "first_failures": len(broken),
        "on_known_broken": len(broken),
        "task_ids": sorted(broken, key=ids.index),
    }
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(ids)
    by_id = {r["task_id"]: r for r in rows}
    assert by_id["multi_turn_base_173"]["fed"] == 5
    assert by_id["multi_turn_base_173"]["label"] == "schema"
    assert by_id["multi_turn_base_0"]["executable"] and by_id["multi_turn_base_0"]["label"] is None
    assert set(rows[0]) >= {"task_id", "trial", "labels", "T", "fed", "label", "success"}


def test_cli_error_rule_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--error-rule strict` turns a status query's false into a refusal; default does not."""
    entry = ENTRIES["multi_turn_base_2"]
    turns = fc_turns(entry.id)
    turns[0][0].insert(0, {"ticket_get_login_status": "{}"})
    path = write_result(tmp_path, "multi_turn_base", [{"id": entry.id, "result": turns}])
    fed = {}
    for rule in ("default", "strict"):
        args = ["pec", str(path), "--bfcl", "--json", "--resamples", "50"]
        assert main([*args, "--error-rule", rule, "--episodes", str(tmp_path / rule)]) == 0
        capsys.readouterr()
        fed[rule] = json.loads((tmp_path / rule).read_text(encoding="utf-8"))["fed"]
    assert fed["strict"] == 1
    assert fed["default"] > 1


def test_cli_bfcl_scores_needs_bfcl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--bfcl-scores` alone is a usage error."""
    f = tmp_path / "e.jsonl"
    f.write_text('{"task_id": "a", "success": true, "fed": 2, "calls": [{"tool_name": "x"}]}\n')
    assert main(["pec", str(f), "--bfcl-scores", str(tmp_path)]) == 2
    assert "--bfcl-scores needs --bfcl" in capsys.readouterr().err


def test_cli_bfcl_files_need_bfcl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A BFCL result file given without `--bfcl` gets a hint, not a JSON error."""
    path = write_result(tmp_path, "multi_turn_base", [{"id": "multi_turn_base_0", "result": []}])
    assert main(["pec", str(path)]) == 2
    assert "replay it with --bfcl" in capsys.readouterr().err
