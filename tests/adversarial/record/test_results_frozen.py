"""A tool's result is the call's own once it ran: a tool that keeps the object it returned
and changes it later (the next time it runs) changes neither the trace nor what is
judged at the end (outside attack round 9: the report and the log read back disagreed,
and an answer citing a symbol the model never saw was judged grounded)."""

from __future__ import annotations

from pathlib import Path

from agentguard import Firewall, load_spec, load_traces, parse_spec, verify_trace

SPEC = Path(__file__).resolve().parents[3] / "specs" / "code_qa.ltl"


def _grounded(report_constraints: object) -> bool:
    (found,) = [c for c in report_constraints if c.name == "answer_is_grounded"]  # type: ignore[attr-defined]
    return bool(found.passed)


def test_a_result_changed_after_it_ran_changes_nothing(tmp_path: Path) -> None:
    spec = load_spec(SPEC)
    log = tmp_path / "decisions.jsonl"
    fw = Firewall(spec, keep_trace=True, log_path=log)
    kept = {"path": "a.py", "content": "def alpha():\n    pass\n"}
    listing = [{"name": "a.py"}]
    for name, args, result in (
        ("search", {"query": "x"}, listing),
        ("read_file", {"path": "a.py"}, kept),
    ):
        decision = fw.start(fw.propose(name, args))
        fw.complete(decision, result)
    kept["content"] = "def zeta_unique_fn():\n    pass\n"  # what the model never saw
    listing.append({"name": "secret.py"})
    answer = fw.start(fw.propose("final_answer", {"answer": "See `zeta_unique_fn`."}))
    fw.complete(answer, None)
    report = fw.finish()
    assert report.trace[1].result == {"path": "a.py", "content": "def alpha():\n    pass\n"}
    assert report.trace[0].result == [{"name": "a.py"}]
    assert not _grounded(report.compliance.constraints)
    (loaded,) = [r.trace for r in load_traces(log) if r.trace is not None]
    assert verify_trace(loaded, spec).score == report.compliance.score


def test_a_tuple_in_a_result_is_copied_as_the_list_the_log_holds(tmp_path: Path) -> None:
    """A tuple is JSON data (an array): kept by reference, code holding the result (a
    CodeAgent) could set ``r[0]["verified"] = True`` after the refund that needed it ran,
    and the report scored 1.0 where the log scored 0.0 (outside attack round 10)."""
    spec = parse_spec(
        "constraint verified severity TOLERATE := "
        "G(issue_refund -> O lookup_order(result[0].verified = true))"
    )
    log = tmp_path / "decisions.jsonl"
    fw = Firewall(spec, keep_trace=True, log_path=log)
    row = {"verified": False, "rows": ({"n": 1},)}
    result = (row, "A1")
    fw.complete(fw.start(fw.propose("lookup_order", {"order_id": "A1"})), result)
    fw.complete(fw.start(fw.propose("issue_refund", {"order_id": "A1"})), "refunded")
    row["verified"] = True
    row["rows"][0]["n"] = 2
    report = fw.finish()
    assert report.trace[0].result == [{"verified": False, "rows": [{"n": 1}]}, "A1"]
    assert report.compliance.score == 0.0
    (loaded,) = [r.trace for r in load_traces(log) if r.trace is not None]
    assert verify_trace(loaded, spec).score == report.compliance.score
