"""The local process pool: pooled results equal serial ones, in input order."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentguard import Trace, parse_spec, verify_trace
from agentguard.cli.main import main
from agentguard.scale import map_chunks, summarize, verify_traces_parallel
from agentguard.scale.pool import _chunks

SPEC = """spec shop
predicate is_even(x)
constraint order := G(refund -> O lookup)
constraint even := forall o: G(refund(order = o) -> is_even(o))
constraint done := F final_answer
"""


def _corpus(count: int, seed: int = 0) -> list[Trace]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        names = rng.choices(["lookup", "refund", "final_answer"], k=rng.randint(0, 6))
        out.append(
            Trace.from_records(
                [{"tool_name": n, "arguments": {"order": rng.randint(0, 5)}} for n in names]
            )
        )
    return out


def _double(items: list[int]) -> list[int]:
    return [2 * x for x in items]


def test_chunks_cover_items_in_order() -> None:
    """Chunking keeps every item once, in order, in at most the asked number of chunks."""
    items = list(range(23))
    chunks = _chunks(items, 8)
    assert [x for c in chunks for x in c] == items and len(chunks) <= 8


def test_map_chunks_equals_serial() -> None:
    """A pooled map returns what the function returns serially, in order."""
    items = list(range(50))
    assert map_chunks(_double, items, 2) == _double(items) == map_chunks(_double, items, 1)


def test_map_chunks_rejects_zero_jobs() -> None:
    """jobs must be positive."""
    with pytest.raises(ValueError, match="jobs"):
        map_chunks(_double, [1], 0)


def test_parallel_reports_equal_serial_with_plugins(tmp_path: Path) -> None:
    """Workers import the plugin modules and load the spec: reports equal verify_trace's."""
    import tests.scale.plugin_is_even  # noqa: F401 - registers is_even here too

    path = tmp_path / "shop.ltl"
    path.write_text(SPEC)
    corpus = _corpus(40)
    pooled = verify_traces_parallel(corpus, path, jobs=2, plugins=["tests.scale.plugin_is_even"])
    spec = parse_spec(SPEC, source=str(path))
    serial = [verify_trace(t, spec) for t in corpus]
    assert [r.to_dict(extended=True) for r in pooled] == [r.to_dict(extended=True) for r in serial]
    assert not any(c.error for r in pooled for c in r.constraints)


def test_summary_counts() -> None:
    """The aggregate table counts traces, labels and per-constraint passes."""
    spec = parse_spec("constraint a := F a\nconstraint b := F b")
    reports = [verify_trace(Trace.of(*n), spec) for n in (["a"], ["a", "b"], [])]
    table = summarize(reports)
    assert table.traces == 3
    assert dict(table.labels) == {"FULL": 1, "PARTIAL": 1, "NONE": 1}
    assert [(c.name, c.passed, c.total) for c in table.constraints] == [("a", 2, 3), ("b", 1, 3)]
    assert table.mean_score == 0.5
    assert json.dumps(table.to_dict())


def test_check_jobs_output_equals_serial(
    tmp_path: Path, specs_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --jobs 2` prints the same JSON and exit code as the serial run."""
    runs = tmp_path / "runs.jsonl"
    lines = [json.dumps({"tool_calls": [c.to_record() for c in t]}) for t in _corpus(30, seed=4)]
    runs.write_text("\n".join([*lines[:10], "{broken", *lines[10:]]) + "\n")
    spec = str(specs_dir / "refund.ltl")
    serial_code = main(["check", "--json", "--extended", spec, str(runs)])
    serial = capsys.readouterr().out
    pooled_code = main(["check", "--json", "--extended", "--jobs", "2", spec, str(runs)])
    pooled = capsys.readouterr().out
    assert (pooled_code, pooled) == (serial_code, serial)
    assert len(json.loads(pooled)["traces"]) == 31


def test_check_jobs_must_be_positive(specs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--jobs 0` is a usage error."""
    with pytest.raises(SystemExit) as exc:
        main(["check", "--jobs", "0", str(specs_dir / "refund.ltl"), "x.json"])
    assert exc.value.code == 2
    assert "--jobs" in capsys.readouterr().err
